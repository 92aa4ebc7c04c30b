package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/wire"
)

// askedGateway is a gateway's end of the framed connection that answers
// the proxy's tag-12 channels with answer (nil: a bare finish) and keeps
// what it was asked.
type askedGateway struct {
	answer []byte
	mu     sync.Mutex
	asked  []wire.McpServerRequest
}

func (g *askedGateway) ServeChannel(_ context.Context, r *wire.Responder, p []byte) {
	req, err := wire.DecodeProxyChannelRequest(p)
	if err != nil {
		return
	}
	sr, ok := req.(wire.McpServerRequest)
	if !ok {
		return
	}
	g.mu.Lock()
	g.asked = append(g.asked, wire.McpServerRequest{Related: sr.Related, Request: append(json.RawMessage(nil), sr.Request...)})
	g.mu.Unlock()
	if g.answer != nil {
		_ = r.Respond(g.answer)
	}
}

// What the MCP server asks of its client during an exchange reaches the
// gateway as a tag-12 channel on the begun scope, over every upstream
// transport, and the gateway's answer — result or error, byte for byte,
// or a bare finish as -32601 — is what the server hears. ping stays the
// proxy's own to answer.
func TestServerRequestsReachTheGatewayOnTag12(t *testing.T) {
	const sampled = `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","big":123456789012345678901234567890}`
	for _, tc := range []struct {
		rule   string
		answer []byte
		heard  string
	}{
		{"a result goes back byte for byte", wire.Response{Result: json.RawMessage(sampled)}.Append(nil),
			"ping => {}; sampling/createMessage => " + sampled},
		{"an error goes back with its own code", wire.Response{Error: jsonrpc.RawError(json.RawMessage(fidelityError))}.Append(nil),
			"ping => {}; sampling/createMessage => error -32099"},
		{"a bare finish is a client that does not serve it", nil,
			"ping => {}; sampling/createMessage => error -32601"},
	} {
		for _, tr := range transports {
			t.Run(tc.rule+"/"+tr.name, func(t *testing.T) {
				ctx := testCtx(t)
				base := serveProxy(t, Options{Upstream: newUpstream(t, tr.config(t))})
				g := &askedGateway{answer: tc.answer}
				cl, err := wire.Dial(ctx, base+"/", &wire.ClientOptions{Channels: g})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cl.Close() })
				scope, ans := begin(t, ctx, cl, "null")
				if !ans.Begun() {
					t.Fatalf("begin refused: %s", ans.Error)
				}
				f := &framed{cl: cl, scope: scope, begun: ans}
				resp := f.exchange(t, ctx, "tools/call", `{"name":"ask_client","arguments":{}}`)
				if resp.Error != nil {
					t.Fatalf("ask_client: %s", resp.Error.Raw())
				}
				if got := toolText(t, resp.Result); got != tc.heard {
					t.Errorf("the server heard %q, want %q", got, tc.heard)
				}
				g.mu.Lock()
				defer g.mu.Unlock()
				if len(g.asked) != 1 {
					t.Fatalf("the gateway was asked %d times, want once (sampling; ping is the proxy's)", len(g.asked))
				}
				m, err := jsonrpc.Parse(g.asked[0].Request)
				if err != nil || m.Method != "sampling/createMessage" || !m.ID.IsValid() || g.asked[0].Related != 0 {
					t.Errorf("asked %+v (%s), want sampling/createMessage with an id, related to no channel", g.asked[0], g.asked[0].Request)
				}
			})
		}
	}
}

// With no framed connection begun there is no gateway to ask: the server
// hears -32601 at once, never a wait.
func TestServerRequestsWithoutAFramedConnectionAreRefused(t *testing.T) {
	ctx := testCtx(t)
	srv, _ := serveStreamable(t, "")
	base := serveProxy(t, Options{Upstream: newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: srv.URL, HTTPClient: srv.Client()})})
	resp := perPath{base}.exchange(t, ctx, "tools/call", `{"name":"ask_client","arguments":{}}`)
	if resp.Error != nil {
		t.Fatalf("ask_client: %s", resp.Error.Raw())
	}
	if got, want := toolText(t, resp.Result), "ping => {}; sampling/createMessage => error -32601"; got != want {
		t.Errorf("the server heard %q, want %q", got, want)
	}
}

// Tag 9 carries every other MCP request over every upstream transport:
// prompts, templates, completion, logging and subscriptions reach the
// server, and its answers (an error included) come back as it sent them;
// initialize is not carried (a bare finish).
func TestTag9CarriesEveryOtherRequest(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := testCtx(t)
			f := beginFramed(t, ctx, serveProxy(t, Options{Upstream: newUpstream(t, tr.config(t))}))
			for _, tc := range []struct{ method, params, want string }{
				{"prompts/list", `{}`, `"test_simple_prompt"`},
				{"prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b"}}`, `"messages"`},
				{"resources/templates/list", ``, `"uriTemplate":"test://template/{id}/data"`},
				{"completion/complete", `{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"x"}}`, `"completion"`},
				{"logging/setLevel", `{"level":"info"}`, `{}`},
				{"resources/subscribe", `{"uri":"test://watched-resource"}`, `{}`},
				{"resources/unsubscribe", `{"uri":"test://watched-resource"}`, `{}`},
				{"ping", ``, `{}`},
			} {
				var params json.RawMessage
				if tc.params != "" {
					params = json.RawMessage(tc.params)
				}
				ch := f.open(t, ctx, wire.McpRequest{Method: tc.method, Params: params}.Append(nil))
				resp := mcpAnswer(t, ctx, ch)
				want(t, tc.method, result(t, resp), tc.want)
			}
			ch := f.open(t, ctx, wire.McpRequest{Method: "no/such/method"}.Append(nil))
			if resp := mcpAnswer(t, ctx, ch); resp.Error == nil || resp.Error.Code != jsonrpc.CodeMethodNotFound {
				t.Errorf("an unknown method: %s, want the server's -32601", errorText(resp))
			}
			bareFinish(t, ctx, f.open(t, ctx, []byte("\x09"+`{"method":"initialize","params":{}}`)), "tag 9 initialize")
		})
	}
}

// roots/list takes the same way as sampling: the gateway's answer is what
// the server hears, over every upstream transport.
func TestRootsReachTheGatewayOnTag12(t *testing.T) {
	const roots = `{"roots":[{"uri":"file:///workspace","name":"workspace"}]}`
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := testCtx(t)
			base := serveProxy(t, Options{Upstream: newUpstream(t, tr.config(t))})
			f, g := beginAsked(t, ctx, base, roots)
			res := result(t, f.exchange(t, ctx, "tools/call", `{"name":"ask_roots","arguments":{}}`))
			if got := toolText(t, res); got != roots {
				t.Errorf("the server heard %q, want the gateway's roots %s", got, roots)
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if len(g.asked) != 1 || !strings.Contains(string(g.asked[0].Request), `"roots/list"`) {
				t.Errorf("the gateway was asked %d times (%v), want roots/list once", len(g.asked), g.asked)
			}
		})
	}
}
