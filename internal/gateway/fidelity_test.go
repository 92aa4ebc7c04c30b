// fidelity_test.go pins spec §8 end to end: what a backend sends — results
// with unknown fields, _meta, numbers no float64 holds, isError with
// structuredContent; JSON-RPC errors with custom codes (in the server range
// and positive), nested data and undefined members — comes out of the
// gateway as the backend wrote it, byte for byte: from a stdio backend and
// from a Streamable HTTP one, to a client over Streamable HTTP (raw HTTP,
// the body read as it came) and over stdio. Only the id differs, and only
// whitespace where a stdio line forces it out (a stdio peer writes one
// message per line). The backend sees the caller's params with only the
// tool's name put back to its own.

package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/sse"
)

// fdFront is one client of the gateway exchanging raw messages.
type fdFront interface {
	// exchange sends a request and returns the raw answer to it.
	exchange(t *testing.T, id int, method, params string) []byte
	// lines reports whether the front is a stdio stream (whitespace of
	// pretty-printed payloads compacted away).
	lines() bool
}

// fdHTTPFront is a raw Streamable HTTP client.
type fdHTTPFront struct {
	base, session string
}

func (f *fdHTTPFront) lines() bool { return false }

func (f *fdHTTPFront) post(t *testing.T, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, f.base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if f.session != "" {
		req.Header.Set(mcphttp.HeaderSessionID, f.session)
		req.Header.Set(mcphttp.HeaderProtocolVersion, "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

func (f *fdHTTPFront) exchange(t *testing.T, id int, method, params string) []byte {
	t.Helper()
	resp, raw := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", method, resp.StatusCode, raw)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return raw
	}
	// An event stream: the answer is the event carrying our id.
	r := sse.NewReader(bytes.NewReader(raw), 0)
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("%s: no answer in the stream %s", method, raw)
		}
		if m, err := jsonrpc.Parse(ev.Data); err == nil && string(m.ID) == fmt.Sprint(id) {
			return bytes.Clone(ev.Data)
		}
	}
}

func fdHTTPConnect(t *testing.T, base string) *fdHTTPFront {
	t.Helper()
	f := &fdHTTPFront{base: base}
	resp, raw := f.post(t, gwInitializeBody)
	if f.session = resp.Header.Get(mcphttp.HeaderSessionID); resp.StatusCode != http.StatusOK || f.session == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, raw)
	}
	if resp, raw = f.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, raw)
	}
	return f
}

// fdStdioFront is a client of the gateway's stdio session.
type fdStdioFront struct {
	w io.Writer
	r *bufio.Reader
}

func (f *fdStdioFront) lines() bool { return true }

func (f *fdStdioFront) exchange(t *testing.T, id int, method, params string) []byte {
	t.Helper()
	if _, err := fmt.Fprintf(f.w, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":%q,\"params\":%s}\n", id, method, params); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := f.r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: reading stdout: %v", method, err)
		}
		if m, err := jsonrpc.Parse(line); err == nil && string(m.ID) == fmt.Sprint(id) {
			return bytes.TrimSuffix(line, []byte("\n"))
		}
	}
}

// fdStdioConnect serves the gateway on a pair of pipes, as `mcpgate serve
// --stdio` does on its own stdin and stdout.
func fdStdioConnect(t *testing.T, ctx context.Context, serve func(context.Context, io.Reader, io.Writer) error) *fdStdioFront {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = serve(ctx, inR, outW)
		_ = outW.Close()
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		_ = outR.Close()
		<-done
	})
	f := &fdStdioFront{w: inW, r: bufio.NewReader(outR)}
	f.exchange(t, 0, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	if _, err := io.WriteString(inW, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"); err != nil {
		t.Fatal(err)
	}
	return f
}

// fdCompact is raw without insignificant whitespace: what a stdio peer
// writes of it.
func fdCompact(t *testing.T, raw string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// fdMember returns the raw bytes of the answer's result or error member.
func fdMember(t *testing.T, answer []byte) (result, errObj string) {
	t.Helper()
	m, err := jsonrpc.Parse(answer)
	if err != nil {
		t.Fatalf("answer %s: %v", answer, err)
	}
	return string(m.Result), string(m.Error)
}

func TestRelayedAnswersLeaveTheGatewayAsTheBackendWroteThem(t *testing.T) {
	testkit.LeakCheck(t)
	t.Setenv("FD_ROLE", fdRoleStdio)
	bh := mcphttp.NewHandler(fdServer("fidh"), mcphttp.Options{})
	bs := httptest.NewServer(bh)
	t.Cleanup(func() { bs.CloseClientConnections(); bs.Close(); bh.Close() })
	base, gw := bkGatewayWith(t, fmt.Sprintf(`backends:
  - name: fs
    kind: stdio
    command: [%q, fids]
    env_from: {%s: FD_ROLE}
  - name: fh
    kind: http
    url: %q
`, os.Args[0], bkChildEnv, bs.URL), backends.Options{Backoff: bkFast.Backoff, PingInterval: -1})
	bkWaitReady(t, base, http.StatusOK)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	fronts := map[string]fdFront{
		"streamable http": fdHTTPConnect(t, base),
		"stdio":           fdStdioConnect(t, ctx, gw.ServeStdio),
	}
	backends := map[string]struct{ prefix, scheme string }{
		"stdio backend": {"fs__", "fids"},
		"http backend":  {"fh__", "fidh"},
	}
	for fname, front := range fronts {
		for bname, b := range backends {
			t.Run(bname+" to "+fname+" client", func(t *testing.T) {
				// What the backend wrote: a stdio backend writes each
				// message on one line, compacting one that holds line
				// breaks (and only then); so does a stdio front.
				want := func(raw string) string {
					if (bname == "stdio backend" || front.lines()) && strings.ContainsAny(raw, "\r\n") {
						return fdCompact(t, raw)
					}
					return raw
				}
				id := 100
				next := func() int { id++; return id }

				res, _ := fdMember(t, front.exchange(t, next(), "tools/call", `{"name":"`+b.prefix+`result","arguments":{}}`))
				if res != want(fdResult) {
					t.Errorf("tools/call result:\n got %s\nwant %s", res, want(fdResult))
				}
				res, _ = fdMember(t, front.exchange(t, next(), "resources/read", `{"uri":"`+b.scheme+`://doc"}`))
				if res != want(fdResource) {
					t.Errorf("resources/read result:\n got %s\nwant %s", res, want(fdResource))
				}
				for tool, raw := range fdErrors {
					_, e := fdMember(t, front.exchange(t, next(), "tools/call", `{"name":"`+b.prefix+tool+`","arguments":{}}`))
					if e != want(raw) {
						t.Errorf("%s error:\n got %s\nwant %s", tool, e, want(raw))
					}
				}

				// The backend got the caller's params with only the name
				// put back to its own.
				const args = `{"big":123456789012345678901234567890,"tiny":-0.0000000000000000000001e-400,"k":[1.0,-0.0],"s":"\u00e9"}`
				const meta = `{"vendor.example/x":{"n":1E+400}}`
				sent := `{"_meta":` + meta + `,"name":"` + b.prefix + `params","arguments":` + args + `,"x-extra":[null]}`
				res, _ = fdMember(t, front.exchange(t, next(), "tools/call", sent))
				got := pfResultText(t, json.RawMessage(res))
				if wantParams := strings.Replace(sent, b.prefix+"params", "params", 1); got != wantParams {
					t.Errorf("the backend received params\n %s\nwant\n %s", got, wantParams)
				}
			})
		}
	}
}
