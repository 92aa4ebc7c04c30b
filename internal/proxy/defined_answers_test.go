// defined_answers_test.go pins the answers docs/wire.md defines for exchanges
// that cannot be relayed as asked: params that do not parse (-32602 per
// path, a bare channel finish framed), a first message that is not binary,
// an upstream that cannot be reached (-32603 with the reason), and one
// that dies mid-call (-32603 with the reason; the next call succeeds once
// it is back).

package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/wire"
)

// unparsable are params each method's params type refuses.
var unparsable = []struct{ method, params string }{
	{"tools/list", `{"cursor": 5}`},
	{"tools/list", `[]`},
	{"tools/list", `{not json`},
	{"resources/list", `{"_meta": "x"}`},
	{"tools/call", `{"arguments": {}}`},
	{"tools/call", `{"name": 1}`},
	{"tools/call", `{"name": "t", "arguments": [1]}`},
	{"tools/call", `"test_simple_text"`},
	{"resources/read", `{}`},
	{"resources/read", `{"uri": 7}`},
	{"resources/read", ``},
}

// tags are the MCP channel request tags, to write malformed requests by
// hand (the wire's encoders only write what they were given).
var tags = map[string]byte{"tools/list": 3, "resources/list": 4, "tools/call": 5, "resources/read": 6}

func TestParamsThatDoNotParse(t *testing.T) {
	ctx := testCtx(t)
	srv, seen := serveStreamable(t, "")
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: srv.URL, HTTPClient: srv.Client()})
	base := serveProxy(t, Options{Upstream: up})

	t.Run("per-path: -32602 with the parser's message", func(t *testing.T) {
		for _, c := range unparsable {
			resp, err := wire.CallPath(ctx, base, pathOf[c.method], []byte(c.params))
			if err != nil {
				t.Fatalf("%s %s: %v", c.method, c.params, err)
			}
			if resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams || resp.Error.Message == "" {
				t.Errorf("%s %s: %s%s, want -32602 with a message", c.method, c.params, resp.Result, errorText(resp))
			}
		}
	})
	t.Run("framed: a bare channel finish", func(t *testing.T) {
		f := beginFramed(t, ctx, base)
		for _, c := range unparsable {
			ch := f.open(t, ctx, append([]byte{tags[c.method]}, c.params...))
			bareFinish(t, ctx, ch, c.method+" "+c.params)
		}
		// The connection is still up and serves the next exchange.
		want(t, "tools/list after them", result(t, f.exchange(t, ctx, "tools/list", "null")), `"test_simple_text"`)
	})
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for key, n := range seen.calls {
		if key != "server/discover" && key != "initialize" && key != "notifications/initialized" && key != "tools/list" {
			t.Errorf("the upstream was sent %d %q; params that do not parse must stop at the proxy", n, key)
		}
	}
}

func errorText(resp wire.Response) string {
	if resp.Error == nil {
		return ""
	}
	return string(resp.Error.Raw())
}

func TestAFirstMessageThatIsNotBinary(t *testing.T) {
	ctx := testCtx(t)
	base := serveProxy(t, Options{Upstream: fixtureUpstream(t, nil)})
	for _, path := range pathOf {
		ws, _, err := websocket.Dial(ctx, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.Write(ctx, websocket.MessageText, []byte(`{"name":"test_simple_text"}`)); err != nil {
			t.Fatal(err)
		}
		typ, msg, err := ws.Read(ctx)
		if err != nil || typ != websocket.MessageBinary {
			t.Fatalf("%s: %v, %v; want a binary answer", path, typ, err)
		}
		resp, err := wire.DecodeResponse(msg)
		if err != nil || resp.Error == nil || resp.Error.Code != -32602 || resp.Error.Message != wire.NotBinaryMessage {
			t.Errorf("%s: %q (%v), want [1] -32602 %q", path, msg, err, wire.NotBinaryMessage)
		}
		if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
			t.Errorf("%s: after the answer: %v, want a clean close", path, err)
		}
		ws.CloseNow()
	}
}

func TestAnUnreachableUpstream(t *testing.T) {
	ctx := testCtx(t)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: closedURL(t) + "/mcp"})
	base := serveProxy(t, Options{Upstream: up})
	for _, f := range []form{perPath{base}, beginFramed(t, ctx, base)} {
		t.Run(f.name(), func(t *testing.T) {
			for _, c := range []struct{ method, params string }{
				{"tools/list", "null"}, {"resources/list", "null"},
				{"tools/call", `{"name":"test_simple_text"}`}, {"resources/read", `{"uri":"test://static-text"}`},
			} {
				unreachable(t, c.method, f.exchange(t, ctx, c.method, c.params))
			}
			// A notification stream: exactly one [1], then its end.
			sub := f.subscribe(t, ctx)
			resp, err := sub.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			unreachable(t, "notifications", resp)
			if resp, err := sub.Next(ctx); !isEOF(err) {
				t.Errorf("notifications after the error: %s, %v; want the end", resp.Result, err)
			}
		})
	}
}

func unreachable(t *testing.T, what string, resp wire.Response) {
	t.Helper()
	e := errorAnswer(t, resp)
	// The reason is whatever the dial met: usually "connection refused", but
	// a kept-alive connection the stopped server closed (EOF) is as good a
	// reason.
	_, reason, _ := strings.Cut(resp.Error.Message, "unreachable")
	if resp.Error.Code != jsonrpc.CodeInternalError || !strings.Contains(resp.Error.Message, "unreachable") ||
		!(strings.Contains(reason, "connection refused") || strings.Contains(reason, "closed") || strings.Contains(reason, "EOF")) {
		t.Errorf("%s: %s; want -32603 saying the upstream is unreachable, and why", what, e)
	}
}

// isEOF is a stream's normal end: a finish after answers (framed) or a
// clean close (per path).
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) && !errors.Is(err, wire.ErrBareFinish)
}

// restartable is an upstream that can be killed mid-call and brought back
// on the same address. Its hang tool announces itself on arrived and then
// blocks until the server is stopped.
type restartable struct {
	t       *testing.T
	addr    string
	arrived chan struct{}
	ts      *httptest.Server
	h       *mcphttp.Handler
	release chan struct{}
}

func (r *restartable) url() string { return "http://" + r.addr + "/mcp" }

// start serves on r.addr (a free port the first time).
func (r *restartable) start() {
	if r.addr == "" {
		r.addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatal(err)
	}
	r.addr = l.Addr().String()
	s := fixture.New(fixture.Options{})
	release := make(chan struct{})
	err = s.AddTools(&mcp.Tool{Name: "hang", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		r.arrived <- struct{}{}
		select {
		case <-ctx.Done():
		case <-release:
		}
		return nil, fmt.Errorf("stopped")
	}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.h = mcphttp.NewHandler(s, mcphttp.Options{})
	r.ts = httptest.NewUnstartedServer(r.h)
	_ = r.ts.Listener.Close()
	r.ts.Listener = l
	r.ts.Start()
	r.release = release
}

// kill cuts every connection to the server, as a crash would.
func (r *restartable) kill() { r.ts.CloseClientConnections() }

// stop ends the server and frees its address.
func (r *restartable) stop() {
	if r.ts == nil {
		return
	}
	close(r.release)
	r.h.Close()
	r.ts.Close()
	r.ts = nil
}

func TestAnUpstreamThatDiesMidCall(t *testing.T) {
	ctx := testCtx(t)
	r := &restartable{t: t, arrived: make(chan struct{}, 1)}
	r.start()
	t.Cleanup(func() { r.stop() })
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: r.url()})
	base := serveProxy(t, Options{Upstream: up})
	for _, f := range []form{perPath{base}, beginFramed(t, ctx, base)} {
		t.Run(f.name(), func(t *testing.T) {
			result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_simple_text"}`))
			call := f.start(t, ctx, "tools/call", `{"name":"hang"}`)
			select {
			case <-r.arrived:
			case <-ctx.Done():
				t.Fatal("the call never reached the upstream")
			}
			r.kill()
			resp := call.wait(t, ctx)
			if e := errorAnswer(t, resp); resp.Error.Code != jsonrpc.CodeInternalError || !strings.Contains(resp.Error.Message, "connection lost during tools/call") {
				t.Errorf("the call the upstream died under: %s; want -32603 saying the connection was lost", e)
			}
			t.Logf("answer to the call the upstream died under: %s", resp.Error.Raw())

			r.stop()
			unreachable(t, "a call while the upstream is down", f.exchange(t, ctx, "tools/call", `{"name":"test_simple_text"}`))

			r.start() // the same address
			got := result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_simple_text"}`))
			want(t, "the call after the upstream is back", got, "This is a simple text response for testing.")
		})
	}
}
