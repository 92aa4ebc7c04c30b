package mcp_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// BenchmarkDeliverAnswerAmong10000Sessions hands a replica an answer for
// one of 10,000 sessions it holds: finding the session is what is
// measured (no call waits, so nothing is delivered).
func BenchmarkDeliverAnswerAmong10000Sessions(b *testing.B) {
	s := newServer(b, mcp.Options{Replica: "aaaa"})
	for i := range 10000 {
		newSession(b, s, mcp.SessionOptions{ID: "sess-" + strconv.Itoa(i), Out: newRecorder()})
	}
	answer := []byte(`{"jsonrpc":"2.0","id":"mcpgate-aaaa-1","result":{}}`)
	for b.Loop() {
		if s.DeliverAnswer("sess-5000", answer) {
			b.Fatal("delivered with no call waiting")
		}
	}
}

// An answer handed over for a session id reaches the session of that id
// whose call waits for it, when another session of the same id has
// ended; none once both have.
func TestAHandedAnswerFindsItsSessionByIDAfterAnotherOfTheIDEnded(t *testing.T) {
	outcomes := make(chan json.RawMessage, 1)
	holder := newServer(t, mcp.Options{Replica: "aaaa"})
	mustAdd(t, holder.AddTools(askTool(outcomes)))
	ended := holder.NewSession(mcp.SessionOptions{ID: "sealed-1", Out: newRecorder()})
	here := newSession(t, holder, mcp.SessionOptions{ID: "sealed-1", Out: newRecorder()})
	initialize(t, here, mcp.LatestVersion)
	ended.Close()
	related := newRecorder()
	answer := asyncCall(t, here, related, nextID(), "tools/call", `{"name":"ask"}`)
	req := related.next(t)
	if !holder.DeliverAnswer("sealed-1", jsonrpc.AppendResult(nil, req.ID, json.RawMessage(`{"model":"m"}`))) {
		t.Fatal("the answer found no session of its id")
	}
	if got := wait(t, outcomes, "the call to get its answer"); string(got) != `{"model":"m"}` {
		t.Errorf("the call got %s", got)
	}
	result(t, wait(t, answer, "the tool's answer"))
	here.Close()
	if holder.DeliverAnswer("sealed-1", jsonrpc.AppendResult(nil, req.ID, json.RawMessage(`{}`))) {
		t.Error("an answer was delivered to a session that ended")
	}
}

// askTool is a tool "ask" that asks its caller for a sampling and sends
// what it got to outcomes.
func askTool(outcomes chan<- json.RawMessage) *mcp.Tool {
	return &mcp.Tool{Name: "ask", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		res, err := r.Call(ctx, "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":5}`))
		if err != nil {
			return nil, err
		}
		outcomes <- res
		return json.RawMessage(`{"content":[]}`), nil
	}}
}
