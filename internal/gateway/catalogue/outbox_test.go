// outbox_test.go pins the delivery of a backend's notifications to a slow
// caller: they never hold up the backend connection's read loop (another
// caller's answer still arrives), they keep the backend's order, those
// beyond the bounded queue are dropped, and the call's result still comes
// after those delivered.

package catalogue_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// stuckSink is a caller that stops reading: every Send waits for unblock.
type stuckSink struct {
	unblock chan struct{}
	once    sync.Once
	mu      sync.Mutex
	msgs    []*jsonrpc.Message
}

func (s *stuckSink) Send(_ context.Context, msg []byte) error {
	<-s.unblock
	m, err := jsonrpc.Parse(append([]byte(nil), msg...))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	return nil
}

func (s *stuckSink) release() { s.once.Do(func() { close(s.unblock) }) }

func (s *stuckSink) all() []*jsonrpc.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*jsonrpc.Message(nil), s.msgs...)
}

func TestASlowCallerNeverHoldsUpTheBackend(t *testing.T) {
	const sent = catalogue.OutboxSize + 40
	chattyDone := make(chan struct{})
	back := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "chatty", Version: "1"}})
	must(t, back.AddTools(
		&mcp.Tool{Name: "chatty", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			for i := 1; i <= sent; i++ {
				if err := r.Progress(ctx, float64(i), sent, ""); err != nil {
					return nil, err
				}
			}
			close(chattyDone)
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("chatted")}})
		}},
		&mcp.Tool{Name: "quick", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("quick")}})
		}},
	))
	f, _ := relayedBothWays(t, back, nil)

	slow := &stuckSink{unblock: make(chan struct{})}
	t.Cleanup(slow.release) // a failing test must not hang on it
	slowAnswer := make(chan *jsonrpc.Message, 1)
	go func() {
		slowAnswer <- frontCall(t, context.Background(), f, slow, `{"name":"b1__chatty","arguments":{},"_meta":{"progressToken":7}}`)
	}()
	<-chattyDone

	// The backend's read loop is free: another caller's answer arrives
	// while the slow caller reads nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if m := frontCall(t, ctx, f, &callerSink{f: f}, `{"name":"b1__quick","arguments":{}}`); m == nil || m.Kind() != jsonrpc.KindResult {
		t.Fatalf("another caller's call, while the slow caller reads nothing: %+v (the backend is held up)", m)
	}
	select {
	case m := <-slowAnswer:
		t.Fatalf("the slow caller's result came before its notifications: %+v", m)
	default:
	}

	slow.release()
	if m := <-slowAnswer; m == nil || m.Kind() != jsonrpc.KindResult {
		t.Fatalf("slow caller's answer %+v", m)
	}
	// Delivered before the result: the backend's first notifications, in
	// its order, as many as the queue holds, plus at most one more (the
	// one being written when the queue filled, or the first to fit once it
	// was taken); the rest were dropped.
	got := slow.all()
	if len(got) < catalogue.OutboxSize || len(got) > catalogue.OutboxSize+1 {
		t.Fatalf("slow caller got %d notifications, want the %d the queue holds (of %d sent)", len(got), catalogue.OutboxSize, sent)
	}
	last := 0
	for i, m := range got {
		p, _ := jsonrpc.Lookup(m.Params, "progress")
		tok, _ := jsonrpc.Lookup(m.Params, "progressToken")
		n, _ := strconv.Atoi(string(p))
		if m.Method != "notifications/progress" || string(tok) != "7" || n <= last || (i < catalogue.OutboxSize && n != i+1) {
			t.Fatalf("notification %d: %s %s, want progress %d under token 7, in order", i, m.Method, m.Params, i+1)
		}
		last = n
	}
}
