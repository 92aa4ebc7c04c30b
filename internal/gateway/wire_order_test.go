//go:build unix

// wire_order_test.go pins what a front client sees of a process backend's
// progress and log messages: each call's own, during that call, in the
// program's order — not late, and not gathered into a later call.

package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// After logging/setLevel, every call through a process backend gets its
// own three log messages and three progress notifications before its
// result, call after call.
func TestProcessBackendCallGetsItsNotificationsDuringTheCall(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	bin := testkit.Mcpgate(t)
	base, _ := bkGateway(t, "backends:\n  - {name: fixture, kind: process, command: [\""+bin+"\", fixture], proxy_command: [\""+bin+"\", proxy], prefix: \"-\"}\n")
	bkWaitReady(t, base, http.StatusOK)

	var mu sync.Mutex
	var logs []string
	progress := map[string]int{}
	conn, err := mcphttp.DialStreamable(ctx, base+"/mcp", mcphttp.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "order-test", Version: "0"},
		OnNotification: func(m *jsonrpc.Message) { // before the answer that follows it
			mu.Lock()
			defer mu.Unlock()
			switch m.Method {
			case "notifications/message":
				d, _ := jsonrpc.Lookup(m.Params, "data")
				logs = append(logs, string(d))
			case "notifications/progress":
				tok, _ := jsonrpc.LookupString(m.Params, "progressToken")
				progress[tok]++
			}
		}})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "logging/setLevel", json.RawMessage(`{"level":"debug"}`)); err != nil {
		t.Fatal(err)
	}
	// The proxy's stream hears only what comes after its opening, which
	// nothing announces: calls that log until one message came through.
	for warm := 0; warm == 0; {
		if _, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"test_tool_with_logging","arguments":{}}`)); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		warm, logs = len(logs), nil
		mu.Unlock()
	}
	for i := range 30 {
		tok := fmt.Sprintf("tok-%d", i)
		if _, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"test_tool_with_logging","arguments":{}}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"`+tok+`"}}`)); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		gotLogs, gotProgress := len(logs), progress[tok]
		mu.Unlock()
		if gotLogs != 3*(i+1) || gotProgress != 3 {
			t.Fatalf("after call pair %d: %d log messages (want %d), %d progress notifications of its own (want 3); logs %v",
				i, gotLogs, 3*(i+1), gotProgress, logs)
		}
	}
}
