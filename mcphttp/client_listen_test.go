package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// cutFirstListens answers the first n subscriptions/listen POSTs with an
// event stream that ends at once, with no answer: a listen the server
// (or something on the way) ended.
func cutFirstListens(n int32, h http.Handler) http.Handler {
	var cut atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" && cut.Add(1) <= n {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Client.Listen holds a subscriptions/listen open on a sessionless server,
// so a list change reaches OnNotification; a stream that ended is opened
// again after the pause, with ended told first; a server's refusal ends
// Listen with that refusal.
func TestListenReopensAStreamThatEndedAndReturnsARefusal(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	srv := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "listen", Version: "1"}})
	h := NewHandler(srv, Options{Sessionless: true})
	t.Cleanup(h.Close)
	url, _ := serveForEra(t, cutFirstListens(2, h))

	conn, err := DialStreamable(ctx, url, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	notes := make(chan string, 16)
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "l", Version: "1"},
		OnNotification: func(m *jsonrpc.Message) { notes <- m.Method }})
	t.Cleanup(func() { _ = c.Close() })
	if era, err := c.Connect(ctx, mcp.EraAuto); err != nil || era != mcp.EraSessionless {
		t.Fatalf("Connect: %q %v", era, err)
	}
	lctx, stop := context.WithCancel(ctx)
	var endings atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- c.Listen(lctx, json.RawMessage(`{"notifications":{"toolsListChanged":true}}`), time.Millisecond,
			func(error) { endings.Add(1) })
	}()
	waitNote(t, notes, "notifications/subscriptions/acknowledged")
	if n := endings.Load(); n != 2 {
		t.Fatalf("the listen was acknowledged after %d endings, want 2 (both cut streams reopened)", n)
	}
	if err := srv.AddTools(&mcp.Tool{Name: "late", SkipValidation: true,
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	waitNote(t, notes, "notifications/tools/list_changed")
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Listen after its context ended: %v, want context.Canceled", err)
	}

	// A server that refuses to listen: Listen returns the refusal.
	refusing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + idOf(r) + `,"error":{"code":-32601,"message":"no listening here"}}`))
			return
		}
		h.ServeHTTP(w, r)
	})
	url2, _ := serveForEra(t, refusing)
	c2, _, err := connectEra(ctx, t, url2, mcp.EraSessionless)
	if err != nil {
		t.Fatal(err)
	}
	err = c2.Listen(ctx, nil, time.Millisecond, func(error) { t.Error("a refusal was taken for a stream that ended") })
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("Listen on a refusing server: %v, want its -32601", err)
	}
}

func waitNote(t *testing.T, notes <-chan string, method string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-notes:
			if m == method {
				return
			}
		case <-timeout:
			t.Fatalf("no %s", method)
		}
	}
}

// idOf is the JSON id of the request in r's body (read whole).
func idOf(r *http.Request) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.NewDecoder(r.Body).Decode(&m)
	return strings.TrimSpace(string(m.ID))
}
