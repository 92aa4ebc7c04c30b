// loglevel_test.go pins that a client's logging/setLevel reaches the
// backends: a backend that logs only at its own default (warning and up)
// sends its debug and info messages once the client asks for debug, and
// a backend that comes up later is asked too.

package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// llBackend logs debug, info and warning from its tool "chatty", each only
// when its own level (default warning, as many servers have) lets it.
func llBackend(t *testing.T) (url string, level *atomic.Value) {
	t.Helper()
	level = &atomic.Value{}
	level.Store(mcp.LevelWarning)
	rank := map[mcp.LogLevel]int{mcp.LevelDebug: 1, mcp.LevelInfo: 2, mcp.LevelWarning: 4}
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "chatty", Version: "1"}})
	s.Handle("logging/setLevel", mcp.HandlerFunc(func(_ context.Context, r *mcp.Request) (json.RawMessage, error) {
		l, _ := jsonrpc.LookupString(r.Params, "level")
		level.Store(mcp.LogLevel(l))
		return json.RawMessage(`{}`), nil
	}))
	if err := s.AddTools(&mcp.Tool{Name: "chatty", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		for _, l := range []mcp.LogLevel{mcp.LevelDebug, mcp.LevelInfo, mcp.LevelWarning} {
			if rank[l] >= rank[level.Load().(mcp.LogLevel)] {
				if err := r.Notify(ctx, "notifications/message", map[string]any{"level": l, "data": string(l)}); err != nil {
					return nil, err
				}
			}
		}
		return pfText("done")
	}}); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(s, mcphttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); h.Close() })
	return srv.URL, level
}

func TestSetLevelReachesTheBackends(t *testing.T) {
	testkit.LeakCheck(t)
	url, level := llBackend(t)
	base, gw := bkGateway(t, fmt.Sprintf("backends:\n  - {name: ch, kind: http, url: %q}\n", url))
	bkWaitReady(t, base, http.StatusOK)
	f := fdHTTPConnect(t, base)
	messages := func(id int) int {
		t.Helper()
		resp, raw := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ch__chatty","arguments":{}}}`, id))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("tools/call: %d %s", resp.StatusCode, raw)
		}
		return strings.Count(string(raw), "notifications/message")
	}
	if n := messages(1); n != 1 {
		t.Fatalf("before setLevel: %d messages, want the backend's default (warning) only", n)
	}
	f.exchange(t, 2, "logging/setLevel", `{"level":"debug"}`)
	if got := level.Load(); got != mcp.LevelDebug {
		t.Fatalf("the backend's level is %v, want debug", got)
	}
	if n := messages(3); n != 3 {
		t.Errorf("after setLevel debug: %d messages, want 3", n)
	}
	// A less verbose level from a client does not quiet the shared
	// backend for the others; the front filters this client's own.
	f.exchange(t, 4, "logging/setLevel", `{"level":"warning"}`)
	if got := level.Load(); got != mcp.LevelDebug {
		t.Errorf("the backend's level is %v after a client asked for warning, want debug kept", got)
	}
	if n := messages(5); n != 1 {
		t.Errorf("after setLevel warning: %d messages reach this client, want 1", n)
	}

	// A backend that comes up after the client asked is asked too.
	later, laterLevel := llBackend(t)
	if _, err := gw.Reload(testkit.Context(t), rlConfig(t, fmt.Sprintf("backends:\n  - {name: ch, kind: http, url: %q}\n  - {name: later, kind: http, url: %q}\n", url, later))); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the later backend to be asked for debug", func() bool { return laterLevel.Load() == mcp.LevelDebug })
}
