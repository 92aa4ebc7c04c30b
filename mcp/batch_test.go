// batch_test.go pins HandleBatch: every request of the array answered,
// notifications and responses not, bad elements answered one by one.

package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// serveBatch parses raw as a transport does and returns the answers.
func serveBatch(t *testing.T, ss *mcp.Session, raw string) []json.RawMessage {
	t.Helper()
	msgs, errs, err := jsonrpc.ParseBatch([]byte(raw))
	if err != nil {
		t.Fatalf("ParseBatch: %v", err)
	}
	out := ss.HandleBatch(context.Background(), msgs, errs, nil)
	if out == nil {
		return nil
	}
	var answers []json.RawMessage
	if err := json.Unmarshal(out, &answers); err != nil {
		t.Fatalf("batch answer is not an array: %s", out)
	}
	return answers
}

func TestHandleBatch(t *testing.T) {
	notified := make(chan string, 8)
	srv := newServer(t, mcp.Options{OnNotification: func(_ context.Context, _ *mcp.Session, m *jsonrpc.Message) {
		notified <- m.Method
	}})
	mustAdd(t, srv.AddTools(textTool("echo", "hi")))
	ss := newSession(t, srv, mcp.SessionOptions{ID: "s", Version: mcp.Version20250326})

	t.Run("requests answered, notifications skipped, bad elements answered alone", func(t *testing.T) {
		answers := serveBatch(t, ss, `[
			{"jsonrpc":"2.0","id":1,"method":"ping"},
			{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},
			5,
			{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"echo"}},
			{"jsonrpc":"2.0","id":3},
			{"jsonrpc":"2.0","id":4,"method":"nope"},
			{"jsonrpc":"2.0","id":"mcpgate-999","result":{}}
		]`)
		byID := map[string]*jsonrpc.Message{}
		for _, a := range answers {
			m := mustParse(t, a)
			if _, dup := byID[string(m.ID)]; dup {
				t.Fatalf("id %s answered twice", m.ID)
			}
			byID[string(m.ID)] = m
		}
		if len(answers) != 5 {
			t.Fatalf("%d answers, want 5: %s", len(answers), answers)
		}
		if got := result(t, byID["1"]); string(got) != `{}` {
			t.Fatalf("ping %s", got)
		}
		if got := decode[toolResult](t, result(t, byID[`"two"`])); got.text(t) != "hi" {
			t.Fatalf("tools/call %+v", got)
		}
		rpcError(t, byID[""], jsonrpc.CodeInvalidRequest) // the bare 5, answered with a null id
		rpcError(t, byID["3"], jsonrpc.CodeInvalidRequest)
		rpcError(t, byID["4"], jsonrpc.CodeMethodNotFound)
		if m := wait(t, notified, "the notification"); m != "notifications/roots/list_changed" {
			t.Fatalf("notification %s", m)
		}
	})
	t.Run("a batch of notifications has no answer", func(t *testing.T) {
		if got := serveBatch(t, ss, `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]`); got != nil {
			t.Fatalf("answered %s", got)
		}
	})
	t.Run("requests of a batch are served concurrently", func(t *testing.T) {
		srv := newServer(t, mcp.Options{})
		secondDone := make(chan struct{})
		mustAdd(t, srv.AddTools(
			&mcp.Tool{Name: "first", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				<-secondDone
				return json.RawMessage(`{"content":[]}`), nil
			}},
			&mcp.Tool{Name: "second", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				close(secondDone)
				return json.RawMessage(`{"content":[]}`), nil
			}},
		))
		ss := newSession(t, srv, mcp.SessionOptions{ID: "s", Version: mcp.Version20250326})
		done := make(chan []json.RawMessage, 1)
		go func() {
			done <- serveBatch(t, ss, `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"first"}},
				{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"second"}}]`)
		}()
		if got := wait(t, done, "the batch (first waits on second)"); len(got) != 2 {
			t.Fatalf("answers %s", got)
		}
	})
	t.Run("BatchRefused is -32600 with a null id", func(t *testing.T) {
		m := mustParse(t, mcp.BatchRefused())
		if m.ID != nil {
			t.Fatalf("id %s", m.ID)
		}
		rpcError(t, m, jsonrpc.CodeInvalidRequest)
	})
}

func TestAllowsBatchOnlyUnder20250326(t *testing.T) {
	for _, v := range mcp.SupportedVersions() {
		if got, want := mcp.AllowsBatch(v), v == mcp.Version20250326; got != want {
			t.Errorf("AllowsBatch(%s) = %v", v, got)
		}
	}
}
