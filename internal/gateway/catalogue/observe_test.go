package catalogue_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// observed is what an Observer was told of one call.
type observed struct {
	backend, method string
	err             error
}

// An Observer hears of every call forwarded to the backend — tools,
// prompts and resources alike — with the backend's name, kind and
// revision, and the method,
// and learns how it ended: nil, or the backend's own JSON-RPC error. The
// call's answer is unchanged.
func TestObserverSeesEachForwardedCallAndItsEnd(t *testing.T) {
	var mu sync.Mutex
	var seen []observed
	obs := func(ctx context.Context, c upstream.Call, out *mcp.Outbound) (context.Context, func(error)) {
		method := out.Method
		if c.Kind != upstream.KindHTTP || c.Version == "" {
			t.Errorf("observed a call to a backend of kind %q at %q, want http at the negotiated revision", c.Kind, c.Version)
		}
		return ctx, func(err error) {
			mu.Lock()
			seen = append(seen, observed{backend: c.Backend, method: method, err: err})
			mu.Unlock()
		}
	}
	f, _, _, _ := relayed(t, catalogue.Options{Observe: obs, Kind: upstream.KindHTTP})

	if got := toolText(t, f.result(t, "tools/call", `{"name":"b1__whoami","arguments":{}}`)); got != "b1" {
		t.Errorf("whoami answered %q through an observed relay", got)
	}
	if m := f.call(t, "tools/call", `{"name":"b1__fail"}`); string(m.Error) != customError {
		t.Errorf("error changed by the observer: %s", m.Error)
	}
	f.result(t, "prompts/get", `{"name":"b1__greet","arguments":{"who":"x"}}`)
	f.result(t, "resources/read", `{"uri":"mem://a"}`)

	mu.Lock()
	defer mu.Unlock()
	want := []struct{ method string }{{"tools/call"}, {"tools/call"}, {"prompts/get"}, {"resources/read"}}
	if len(seen) != len(want) {
		t.Fatalf("observer saw %d calls, want %d: %+v", len(seen), len(want), seen)
	}
	for i, w := range want {
		if seen[i].backend != "b1" || seen[i].method != w.method {
			t.Errorf("call %d observed as %s %s, want b1 %s", i, seen[i].backend, seen[i].method, w.method)
		}
	}
	var je *jsonrpc.Error
	if !errors.As(seen[1].err, &je) || je.Code != -32099 {
		t.Errorf("the failing call ended with %v, want the backend's -32099", seen[1].err)
	}
	for i, s := range seen {
		if i != 1 && s.err != nil {
			t.Errorf("call %d ended with %v", i, s.err)
		}
	}
}
