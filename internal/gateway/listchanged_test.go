// listchanged_test.go: a change of a backend's tool list reaches every
// client that asked, in both eras — a 2025 session's stream and a
// 2026-07-28 subscriptions/listen stream (issue 28, part 4).

package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func TestABackendsListChangeReachesBothEras(t *testing.T) {
	// The backend spoken to as 2026-07-28 (its changes come on the
	// gateway's own listen stream) and as 2025 (on its session's stream).
	for _, upstream := range []string{"", ", era: session"} {
		t.Run("upstream"+upstream, func(t *testing.T) { listChangeReachesBothEras(t, upstream) })
	}
}

func listChangeReachesBothEras(t *testing.T, upstream string) {
	back := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "changing", Version: "1"}})
	noop := func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}})
	}
	if err := back.AddTools(&mcp.Tool{Name: "first", Handler: noop}); err != nil {
		t.Fatal(err)
	}
	e := gwStart(t, "listen: 127.0.0.1:0\nbackends: ["+strings.TrimSuffix(httpBackend(t, back), "}")+upstream+"}]\n")
	bkRun(t, e.gw)
	secret, _ := e.token("vi", "viewer")
	ctx := testkit.Context(t)
	heard := map[mcp.Era]chan string{mcp.EraSession: make(chan string, 16), mcp.EraSessionless: make(chan string, 16)}
	for era, ch := range heard {
		conn, err := mcphttp.DialStreamable(ctx, e.base+"/mcp", mcphttp.ClientOptions{Header: http.Header{"Authorization": {gwBearer(secret)}}})
		if err != nil {
			t.Fatal(err)
		}
		c := mcp.NewClient(conn, mcp.ClientOptions{OnNotification: func(m *jsonrpc.Message) { ch <- m.Method }})
		t.Cleanup(func() { c.Close() })
		if got, err := c.Connect(ctx, era); err != nil || got != era {
			t.Fatalf("connect as %s: %s %v", era, got, err)
		}
		testkit.WaitFor(t, "first listed", func() bool {
			res, err := c.Call(ctx, "tools/list", nil)
			return err == nil && strings.Contains(string(res), `"first"`)
		})
		if era == mcp.EraSessionless {
			lctx, cancel := context.WithCancel(ctx)
			t.Cleanup(cancel)
			go c.Listen(lctx, json.RawMessage(`{"notifications":{"toolsListChanged":true}}`), 50*time.Millisecond, func(error) {})
		}
	}
	// Each change is told to the streams open at the time: the backend
	// changes its list until both clients heard of it, the 2025 session's
	// GET stream and the listen stream being opened meanwhile.
	deadline := time.Now().Add(20 * time.Second)
	pending := map[mcp.Era]bool{mcp.EraSession: true, mcp.EraSessionless: true}
	for n := 0; len(pending) > 0; n++ {
		if time.Now().After(deadline) {
			t.Fatalf("no tools/list_changed heard by %v", pending)
		}
		if err := back.AddTools(&mcp.Tool{Name: "added_" + strconv.Itoa(n), Handler: noop}); err != nil {
			t.Fatal(err)
		}
		for era := range pending {
			wait := time.NewTimer(200 * time.Millisecond)
			for done := false; !done; {
				select {
				case m := <-heard[era]:
					if m == mcp.ToolsListChanged {
						delete(pending, era)
						done = true
					}
				case <-wait.C:
					done = true
				}
			}
			wait.Stop()
		}
	}
}
