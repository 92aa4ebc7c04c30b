// streamable_bench_test.go measures one tools/call round trip through the
// Streamable HTTP server over real loopback HTTP, client included: a
// keep-alive net/http client, one session, a small echo tool whose input
// schema is checked on every call. The figures are the transport's cost as
// a client sees it, with the answer as plain JSON or as an event stream.

package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

const (
	stBenchJSON = "application/json, text/event-stream"
	stBenchSSE  = "text/event-stream, application/json"
)

// stBench is a session on a loopback server, ready for tools/call.
type stBench struct {
	url    string
	client *http.Client
	sid    string
	body   []byte
}

func newStBench(b *testing.B) *stBench {
	b.Helper()
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "bench", Version: "0"}})
	err := s.AddTools(&mcp.Tool{Name: "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			text, _ := jsonrpc.LookupString(args, "text")
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}})
		}})
	if err != nil {
		b.Fatal(err)
	}
	h := NewHandler(s, Options{})
	srv := httptest.NewServer(Guard(h, GuardOptions{}))
	b.Cleanup(srv.Close)
	b.Cleanup(h.Close)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1024
	b.Cleanup(tr.CloseIdleConnections)
	bn := &stBench{url: srv.URL + "/mcp", client: &http.Client{Transport: tr},
		body: []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, benchmark"}}}`)}

	status, hdr, body := bn.do(b, stHeaders(""), []byte(stInitBody(mcp.Version20251125)))
	bn.sid = hdr.Get(HeaderSessionID)
	if status != 200 || bn.sid == "" {
		b.Fatalf("initialize = %d: %s", status, body)
	}
	if status, _, body := bn.do(b, bn.headers(stBenchJSON), []byte(stInitialized)); status != http.StatusAccepted {
		b.Fatalf("initialized = %d: %s", status, body)
	}
	for _, accept := range []string{stBenchJSON, stBenchSSE} {
		_, _, body := bn.do(b, bn.headers(accept), bn.body)
		if !bytes.Contains(body, []byte(`"text":"hello, benchmark"`)) {
			b.Fatalf("tools/call answered %s", body)
		}
	}
	return bn
}

func (bn *stBench) headers(accept string) http.Header {
	h := stHeaders(bn.sid, "Accept", accept)
	h.Set(HeaderProtocolVersion, mcp.Version20251125)
	return h
}

// do makes one round trip; it is the benchmark's loop body.
func (bn *stBench) do(b *testing.B, hdr http.Header, body []byte) (int, http.Header, []byte) {
	req, err := http.NewRequest(http.MethodPost, bn.url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header = hdr
	resp, err := bn.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

func BenchmarkStreamableToolsCall(b *testing.B) {
	for _, tc := range []struct{ name, accept string }{{"json", stBenchJSON}, {"sse", stBenchSSE}} {
		b.Run(tc.name, func(b *testing.B) {
			bn := newStBench(b)
			hdr := bn.headers(tc.accept)
			b.ReportAllocs()
			for b.Loop() {
				if status, _, body := bn.do(b, hdr, bn.body); status != 200 {
					b.Fatalf("tools/call = %d: %s", status, body)
				}
			}
		})
	}
}

func BenchmarkStreamableToolsCallParallel(b *testing.B) {
	for _, tc := range []struct{ name, accept string }{{"json", stBenchJSON}, {"sse", stBenchSSE}} {
		b.Run(tc.name, func(b *testing.B) {
			bn := newStBench(b)
			hdr := bn.headers(tc.accept)
			var worker atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				// Ids must be unique among a session's requests in flight.
				body := bytes.Replace(bn.body, []byte(`"id":7`), fmt.Appendf(nil, `"id":"w%d"`, worker.Add(1)), 1)
				for pb.Next() {
					if status, _, body := bn.do(b, hdr, body); status != 200 {
						b.Errorf("tools/call = %d: %s", status, body)
						return
					}
				}
			})
		})
	}
}
