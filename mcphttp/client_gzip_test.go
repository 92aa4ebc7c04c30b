// client_gzip_test.go pins that a StreamableConn asks for gzip on its POSTs
// itself, as the transport would, and decodes a gzipped answer, plain JSON
// or event stream, from a real server behind a compressing front.

package mcphttp

import (
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// gzipFront compresses every answer with a body when the request accepts
// gzip, as a reverse proxy in front of a server may; it counts the POSTs
// that asked and the answers it compressed.
type gzipFront struct {
	next              http.Handler
	asked, compressed atomic.Int32
}

func (f *gzipFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.Header.Get("Accept-Encoding") == "gzip" {
		f.asked.Add(1)
	}
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		f.next.ServeHTTP(w, r)
		return
	}
	gw := &gzipWriter{ResponseWriter: w, code: http.StatusOK, count: &f.compressed}
	f.next.ServeHTTP(gw, r)
	if gw.zw == nil {
		w.WriteHeader(gw.code)
		return
	}
	_ = gw.zw.Close()
}

// gzipWriter starts compressing at the first byte of the body, and counts
// the answer then, before any of it is sent; an answer without a body (202
// Accepted) goes out as it is.
type gzipWriter struct {
	http.ResponseWriter
	code  int
	zw    *gzip.Writer
	count *atomic.Int32
}

func (g *gzipWriter) WriteHeader(code int) { g.code = code }

func (g *gzipWriter) Write(p []byte) (int, error) {
	if g.zw == nil {
		h := g.ResponseWriter.Header()
		h.Del("Content-Length")
		h.Set("Content-Encoding", "gzip")
		g.ResponseWriter.WriteHeader(g.code)
		g.zw = gzip.NewWriter(g.ResponseWriter)
		g.count.Add(1)
	}
	return g.zw.Write(p)
}

func (g *gzipWriter) Flush() {
	if g.zw == nil {
		g.ResponseWriter.WriteHeader(g.code)
	} else {
		_ = g.zw.Flush()
	}
	g.ResponseWriter.(http.Flusher).Flush()
}

// echoBehind calls the echo tool of the SDK's server behind a gzipFront,
// with the test server's HTTP client as adjust leaves it.
func echoBehind(t *testing.T, jsonAnswers bool, adjust func(*http.Client), text string) *gzipFront {
	t.Helper()
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	s := newSDKServer()
	front := &gzipFront{next: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{JSONResponse: jsonAnswers})}
	srv := httptest.NewServer(front)
	t.Cleanup(srv.Close)
	hc := srv.Client()
	adjust(hc)
	conn, err := DialStreamable(ctx, srv.URL, ClientOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	c := newOurClient(t, conn)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.callTool(ctx, t, `{"name":"echo","arguments":{"text":"`+text+`"}}`); got != "echo: "+text {
		t.Errorf("echo = %q", got)
	}
	return front
}

func TestClientStreamableAsksForGzipAndDecodesIt(t *testing.T) {
	for _, tc := range []struct {
		rule string
		json bool // the server answers plain JSON, else an event stream
	}{
		{"a gzipped JSON answer is decoded", true},
		{"a gzipped event stream is decoded", false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			front := echoBehind(t, tc.json, func(*http.Client) {}, "squeezed")
			if front.asked.Load() < 2 || front.compressed.Load() < 2 {
				t.Errorf("%d POSTs asked for gzip and %d answers were gzipped: the test did not exercise it",
					front.asked.Load(), front.compressed.Load())
			}
		})
	}
	t.Run("a transport that disables compression is not asked to", func(t *testing.T) {
		front := echoBehind(t, true, func(hc *http.Client) { hc.Transport.(*http.Transport).DisableCompression = true }, "plain")
		if front.asked.Load() != 0 || front.compressed.Load() != 0 {
			t.Errorf("%d POSTs asked for gzip, %d answers gzipped; want none", front.asked.Load(), front.compressed.Load())
		}
	})
}
