package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// A session answers a long result in parts, the handler's own bytes as the
// result (a relayed backend's answer is written from the buffer it came
// in), and Handle joins the same parts into one response.
func TestASessionAnswersALongResultWithTheHandlersOwnBytes(t *testing.T) {
	long := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 64<<10) + `"}]}`)
	short := json.RawMessage(`{"content":[]}`)
	s := newServer(t, mcp.Options{})
	for name, res := range map[string]json.RawMessage{"long": long, "short": short} {
		if err := s.AddTools(&mcp.Tool{Name: name, Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return res, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	ss, _ := readySession(t, s)
	for name, res := range map[string]json.RawMessage{"long": long, "short": short} {
		m := mustParse(t, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+name+`"}}`))
		a := ss.Answer(context.Background(), m, nil)
		if want := jsonrpc.AppendResult(nil, jsonrpc.ID("7"), res); string(a.Bytes()) != string(want) {
			t.Errorf("%s: answer %.100s, want %.100s", name, a.Bytes(), want)
		}
		if shared := a.Rest != nil && &a.Rest[0] == &res[0]; shared != (name == "long") {
			t.Errorf("%s: the answer holds the handler's bytes: %v", name, shared)
		}
		if got := ss.Handle(context.Background(), m, nil); string(got) != string(a.Bytes()) {
			t.Errorf("%s: Handle %.100s", name, got)
		}
	}
}
