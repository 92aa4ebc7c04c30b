package catalogue_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// pickRouter routes every call to up, or refuses it with err, and counts
// releases.
type pickRouter struct {
	mu       sync.Mutex
	up       catalogue.Session
	err      error
	released int
}

func (p *pickRouter) Route(context.Context, *mcp.Request) (catalogue.Session, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return catalogue.Session{}, nil, p.err
	}
	return p.up, func() { p.mu.Lock(); p.released++; p.mu.Unlock() }, nil
}

func (p *pickRouter) set(up catalogue.Session, err error) {
	p.mu.Lock()
	p.up, p.err = up, err
	p.mu.Unlock()
}

// A Router sends each call on the upstream session it picks (the zero
// Upstream: the Backend's own client) and is told when the call is over;
// a Router's refusal is answered -32603 naming the backend, with the
// reason only when the router marked it as the caller's to see.
func TestRouterChoosesTheUpstreamOfEachCall(t *testing.T) {
	shared, own := newBackendServer(t, "shared", 0), newBackendServer(t, "own", 0)
	router := &pickRouter{up: catalogue.Session{Client: connect(t, own.Server), Inflight: catalogue.NewInflight()}}
	f := newFront(t)
	b := catalogue.New("b1", connect(t, shared.Server), catalogue.Options{Router: router})
	must(t, b.Sync(context.Background(), f.Server))

	if got := toolText(t, f.result(t, "tools/call", `{"name":"b1__whoami"}`)); got != "own" {
		t.Errorf("routed call reached %q, want own", got)
	}
	router.mu.Lock()
	if router.released != 1 {
		t.Errorf("released %d times after one call, want 1", router.released)
	}
	router.mu.Unlock()

	router.set(catalogue.Session{}, nil)
	if got := toolText(t, f.result(t, "tools/call", `{"name":"b1__whoami"}`)); got != "shared" {
		t.Errorf("call routed to the zero Upstream reached %q, want shared", got)
	}

	router.set(catalogue.Session{}, &catalogue.RouteError{Shown: "no room upstream", Err: errors.New("no room upstream (3 open)")})
	m := f.call(t, "tools/call", `{"name":"b1__whoami"}`)
	e, err := m.ErrorObject()
	if err != nil || e.Code != jsonrpc.CodeInternalError || e.Message != "backend b1 unavailable: no room upstream" {
		t.Fatalf("refused route: %s, want -32603 saying what the router chose to show", m.Error)
	}
	// Any other failure is the operator's to read: the caller learns only
	// which backend.
	router.set(catalogue.Session{}, errors.New("dial tcp 127.0.0.1:3901: connect: connection refused"))
	m = f.call(t, "tools/call", `{"name":"b1__whoami"}`)
	if e, err = m.ErrorObject(); err != nil || e.Message != "backend b1 is unavailable" {
		t.Fatalf("refused route: %s, want -32603 with no detail", m.Error)
	}
	var data struct{ Backend string }
	if err := json.Unmarshal(e.Data, &data); err != nil || data.Backend != "b1" {
		t.Errorf("refused route data %s, want backend b1", e.Data)
	}
}
