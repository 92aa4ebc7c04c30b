package catalogue

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// A backend answering with ever new task ids grows the gateway's routes
// no further than maxTaskRoutes, and the route made longest ago goes
// first.
func TestTaskRoutesAreBoundedTheOldestGoingFirst(t *testing.T) {
	c := NewClaims()
	b := &Mirror{name: "b1", claims: c}
	c.live["b1"] = b
	ctx := mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "alice"})
	route := func(n int) bool {
		r := &mcp.Request{Method: "tasks/get", Params: json.RawMessage(`{"taskId":"t` + strconv.Itoa(n) + `"}`)}
		got, _ := c.taskBackend(ctx, r)
		return got == b
	}
	for n := range maxTaskRoutes + 10 {
		if err := c.noteTask(ctx, b, json.RawMessage(`{"resultType":"task","taskId":"t`+strconv.Itoa(n)+`"}`)); err != nil {
			t.Fatalf("task %d: %v", n, err)
		}
	}
	if n := c.tasks.Len(); n != maxTaskRoutes {
		t.Errorf("%d routes kept, want %d", n, maxTaskRoutes)
	}
	if route(9) || !route(10) || !route(maxTaskRoutes+9) {
		t.Errorf("routes of tasks 9, 10 and the last: %v %v %v, want the ten oldest gone and the rest kept",
			route(9), route(10), route(maxTaskRoutes+9))
	}
}
