// sessionless.go serves one 2026-07-28 request on an engine as a transport
// does — read, checked, served — for the tests of what the engine and the
// relay answer it.

package mcptest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Sessionless serves body, one JSON-RPC request whose _meta names a
// sessionless revision, on s as the caller who (no identity when ""),
// and returns the answer. A request the engine refuses before serving
// fails tb.
func Sessionless(tb testing.TB, s *mcp.Server, who, body string) *jsonrpc.Message {
	tb.Helper()
	m, err := jsonrpc.Parse([]byte(body))
	if err != nil {
		tb.Fatal(err)
	}
	sr, ok := mcp.ReadSessionless(m)
	if !ok {
		tb.Fatalf("not a sessionless request: %s", body)
	}
	if refusal := s.CheckSessionless(&sr); refusal != nil {
		tb.Fatalf("refused: %+v", refusal.Err)
	}
	ctx := context.Background()
	if who != "" {
		ctx = mcp.WithIdentity(ctx, mcp.Identity{Subject: who, Role: "r"})
	}
	a, err := jsonrpc.Parse(s.ServeSessionless(ctx, &sr, nil))
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// InputRequest is one request of an InputRequiredResult, its params as sent.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// InputRequired reads a as an InputRequiredResult and returns its requests
// by key and its requestState; an answer of any other kind, or one without
// requestState, fails tb.
func InputRequired(tb testing.TB, a *jsonrpc.Message) (map[string]InputRequest, string) {
	tb.Helper()
	var r struct {
		ResultType    string                  `json:"resultType"`
		InputRequests map[string]InputRequest `json:"inputRequests"`
		RequestState  string                  `json:"requestState"`
	}
	if a.Error != nil || json.Unmarshal(a.Result, &r) != nil || r.ResultType != "input_required" || r.RequestState == "" {
		tb.Fatalf("want an InputRequiredResult with requestState, got %s %v", a.Result, a.Error)
	}
	return r.InputRequests, r.RequestState
}
