// stateless_test.go pins the 2025 era's stateless mode on the engine's
// sessionless path: the server's own request goes out on the call's
// stream, and only its caller's answer, posted on its own, reaches it.

package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

type chanSink chan []byte

func (c chanSink) Send(_ context.Context, msg []byte) error {
	c <- append([]byte(nil), msg...)
	return nil
}

func TestAStatelessCallIsAnsweredOnlyByItsCaller(t *testing.T) {
	s := newServer(t, mcp.Options{})
	must(t, s.AddTools(&mcp.Tool{Name: "ask", SkipValidation: true,
		Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			if r.Session != nil || r.MultiRoundTrip() || !r.Stateless() || r.Version() != mcp.Version20250618 {
				t.Errorf("a stateless request: session %v, multi round-trip %v, stateless %v, version %q", r.Session, r.MultiRoundTrip(), r.Stateless(), r.Version())
			}
			res, err := r.Call(ctx, "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1})
			if err != nil {
				return nil, err
			}
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(res))}})
		}}))
	as := func(who string) context.Context {
		return mcp.WithIdentity(context.Background(), mcp.Identity{Subject: who, Role: "r"})
	}
	parse := func(b string) *jsonrpc.Message {
		m, err := jsonrpc.Parse([]byte(b))
		must(t, err)
		return m
	}
	sink := make(chanSink, 4)
	done := make(chan []byte, 1)
	go func() {
		done <- s.ServeStateless(as("alice"), parse(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}`), mcp.Version20250618, sink)
	}()
	var asked *jsonrpc.Message
	select {
	case b := <-sink:
		asked = parse(string(b))
	case <-time.After(10 * time.Second):
		t.Fatal("the server's request never went out on the call's stream")
	}
	if asked.Method != "sampling/createMessage" || asked.ID == nil {
		t.Fatalf("sent %s", asked.Append(nil))
	}
	answer := func(text string) *jsonrpc.Message {
		return parse(`{"jsonrpc":"2.0","id":` + string(asked.ID) + `,"result":{"role":"assistant","model":"m","content":{"type":"text","text":"` + text + `"}}}`)
	}
	if out := s.ServeStateless(as("mallory"), answer("mallory's"), mcp.Version20250618, nil); out != nil {
		t.Errorf("an answer was answered: %s", out)
	}
	if out := s.ServeStateless(as("alice"), answer("alice's"), mcp.Version20250618, nil); out != nil {
		t.Errorf("an answer was answered: %s", out)
	}
	select {
	case res := <-done:
		if !strings.Contains(string(res), "alice's") || strings.Contains(string(res), "mallory's") {
			t.Errorf("the call's result %s, want alice's answer only", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call never ended")
	}
}
