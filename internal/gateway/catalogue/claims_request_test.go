// claims_request_test.go pins the owner a relayed entry carries
// (mcp.Entry.Owner): the engine resolves it once per request, live or
// down, for everything that reports on the call.

package catalogue_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/mcp"
)

// targets records the Target of every request a server serves.
type targets struct {
	mu   sync.Mutex
	seen map[string]mcp.Target // by params
}

func (o *targets) Begin(ctx context.Context, r *mcp.Request) context.Context {
	if t := r.Target(); t != nil {
		o.mu.Lock()
		o.seen[r.Method+" "+string(r.Params)] = *t
		o.mu.Unlock()
	}
	return ctx
}

func (*targets) End(context.Context, *mcp.Request, mcp.End) {}

func TestARelayedEntryNamesItsBackendAsOwnerLiveOrDown(t *testing.T) {
	claims := catalogue.NewClaims()
	seen := &targets{seen: map[string]mcp.Target{}}
	f := &front{Server: mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "front", Version: "1"},
		Unknown: claims.Unknown, Observers: []mcp.Observer{seen}}), out: &mcptest.Recorder{}}
	f.ss = f.NewSession(mcp.SessionOptions{ID: "front", Out: f.out})
	t.Cleanup(f.ss.Close)
	f.result(t, "initialize", `{"protocolVersion":"`+mcp.LatestVersion+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	bs := newBackendServer(t, "b1", 0)
	b := catalogue.New("b1", connect(t, bs.Server), catalogue.Options{Claims: claims})
	must(t, b.Sync(context.Background(), f.Server))

	check := func(state string, found bool) {
		t.Helper()
		for _, c := range tombCalls {
			f.call(t, c[0], c[1])
			seen.mu.Lock()
			got := seen.seen[c[0]+" "+c[1]]
			seen.mu.Unlock()
			if got.Entry.Owner != "b1" || got.Found != found {
				t.Errorf("%s: %s %s resolved to %+v, want owner b1, found %v", state, c[0], c[1], got, found)
			}
		}
		f.call(t, "tools/call", `{"name":"nobody"}`)
		seen.mu.Lock()
		defer seen.mu.Unlock()
		if got := seen.seen[`tools/call {"name":"nobody"}`]; got.Found || got.Entry.Owner != "" {
			t.Errorf("%s: an unknown tool resolved to %+v, want no entry and no owner", state, got)
		}
	}
	check("live", true)
	b.Down(f.Server)
	check("down", false)
}
