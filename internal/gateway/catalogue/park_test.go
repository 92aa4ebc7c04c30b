// park_test.go pins the relay of a 2025-era backend's requests to a
// 2026-07-28 caller: the call is parked, the caller is asked in its
// result, and its retry answers the backend and gets the call's result.

package catalogue_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// parkBackend has a tool that asks its client to sample twice, as a
// 2025-era server does: requests on its session, one after the other.
func parkBackend(t *testing.T) *mcp.Server {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "asker", Version: "1"}})
	must(t, s.AddTools(&mcp.Tool{Name: "ask_twice", SkipValidation: true,
		Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			var got []string
			for _, q := range []string{"first?", "second?"} {
				res, err := r.Call(ctx, "sampling/createMessage", map[string]any{"messages": []any{map[string]any{"role": "user",
					"content": map[string]string{"type": "text", "text": q}}}, "maxTokens": 10})
				if err != nil {
					return nil, err
				}
				got = append(got, string(res))
			}
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(strings.Join(got, " | "))}})
		}}))
	return s
}

// modernCall serves one 2026-07-28 tools/call of b1__ask_twice on f as who.
func modernCall(t *testing.T, f *front, who, extra string) *jsonrpc.Message {
	t.Helper()
	return mcptest.Sessionless(t, f.Server, who, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"b1__ask_twice","arguments":{}`+extra+
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`)
}

func asked(t *testing.T, a *jsonrpc.Message, question string) (key, state string) {
	t.Helper()
	reqs, state := mcptest.InputRequired(t, a)
	if len(reqs) != 1 {
		t.Fatalf("want an InputRequiredResult with one request, got %s", a.Result)
	}
	for k, in := range reqs {
		if in.Method != "sampling/createMessage" || !strings.Contains(string(in.Params), question) {
			t.Errorf("asked %s %s, want the backend's sampling of %q, its params as sent", in.Method, in.Params, question)
		}
		key = k
	}
	return key, state
}

func TestABackendsRequestsReachAModernCallerInItsResult(t *testing.T) {
	f, _ := relayedBothWays(t, parkBackend(t), catalogue.NewClaims())
	key, state := asked(t, modernCall(t, f, "alice", ""), "first?")

	// A retry without the answer is asked again; one from another caller,
	// or with a state that is not ours, is refused.
	if k2, s2 := asked(t, modernCall(t, f, "alice", `,"requestState":"`+state+`"`), "first?"); k2 != key {
		t.Fatalf("asked again under %s, want %s", k2, key)
	} else {
		state = s2
	}
	for _, bad := range []struct{ who, state string }{{"mallory", state}, {"alice", state + "x"}, {"alice", "not-ours"}} {
		a := modernCall(t, f, bad.who, `,"requestState":"`+bad.state+`"`)
		if e, _ := a.ErrorObject(); e == nil || e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("state %q as %s: %s %s, want -32602", bad.state, bad.who, a.Result, a.Error)
		}
	}
	// None of those took the park from alice.
	answer := func(text string) string {
		return `,"inputResponses":{"` + key + `":{"role":"assistant","content":{"type":"text","text":"` + text + `"},"model":"m"}},"requestState":"` + state + `"`
	}
	key, state = asked(t, modernCall(t, f, "alice", answer("one")), "second?")
	done := modernCall(t, f, "alice", answer("two"))
	if done.Error != nil || !strings.Contains(string(done.Result), `"resultType":"complete"`) ||
		!strings.Contains(string(done.Result), "one") || !strings.Contains(string(done.Result), "two") {
		t.Fatalf("the retry with the last answer: %s %s, want the call's result with both answers", done.Result, done.Error)
	}
}

// A 2026-07-28 caller that did not declare what a 2025 backend asks of it
// is answered -32021 saying what was asked; the backend hears -32601, as
// from such a client, and its call is ended.
func TestAModernCallerWithoutTheCapabilityIsAnsweredMissingCapability(t *testing.T) {
	f, _ := relayedBothWays(t, parkBackend(t), catalogue.NewClaims())
	a := mcptest.Sessionless(t, f.Server, "alice", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"b1__ask_twice","arguments":{}`+
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}`)
	if e, _ := a.ErrorObject(); e == nil || e.Code != mcp.CodeMissingRequiredCapability || !strings.Contains(e.Message, "sampling") ||
		!strings.Contains(string(e.Data), `"requiredCapabilities":{"sampling":{}}`) {
		t.Fatalf("got %s %s, want -32021 naming sampling, in data.requiredCapabilities too", a.Result, a.Error)
	}
}

// What a 2025 backend sends about a parked call once the caller's retry
// has answered it — progress, here — goes on the retry's stream, under the
// retry's progress token: the first request's stream is gone.
func TestNotificationsAfterAParkReachTheRetry(t *testing.T) {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "asker", Version: "1"}})
	must(t, s.AddTools(&mcp.Tool{Name: "ask_then_report", SkipValidation: true,
		Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			if _, err := r.Call(ctx, "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1}); err != nil {
				return nil, err
			}
			if err := r.Progress(ctx, 1, 2, "after the answer"); err != nil {
				return nil, err
			}
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("done")}})
		}}))
	f, _ := relayedBothWays(t, s, catalogue.NewClaims())
	serve := func(progress, extra string, sink mcp.Sink) *jsonrpc.Message {
		m, err := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"b1__ask_then_report","arguments":{}` + extra +
			`,"_meta":{"progressToken":"` + progress + `","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`))
		must(t, err)
		sr, _ := mcp.ReadSessionless(m)
		ctx := mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "alice", Role: "r"})
		a, err := jsonrpc.Parse(f.Server.ServeSessionless(ctx, &sr, sink))
		must(t, err)
		return a
	}
	reqs, state := mcptest.InputRequired(t, serve("first", "", &mcptest.Recorder{}))
	var key string
	for k := range reqs {
		key = k
	}
	var mu sync.Mutex
	var sent []string
	retry := sinkFunc(func(_ context.Context, msg []byte) error {
		mu.Lock()
		sent = append(sent, string(msg))
		mu.Unlock()
		return nil
	})
	done := serve("second", `,"inputResponses":{"`+key+`":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}},"requestState":"`+state+`"`, retry)
	if done.Error != nil || !strings.Contains(string(done.Result), "done") {
		t.Fatalf("the retry: %s %s", done.Result, done.Error)
	}
	mu.Lock()
	got := strings.Join(sent, "\n")
	mu.Unlock()
	if strings.Count(got, `"method":"notifications/progress"`) != 1 || !strings.Contains(got, `"progressToken":"second"`) {
		t.Errorf("the retry's stream got %s, want the backend's progress under the retry's token", got)
	}
}
