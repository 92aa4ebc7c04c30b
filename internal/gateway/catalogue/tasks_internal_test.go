package catalogue

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
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
		_, got, _ := c.taskBackend(ctx, r)
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

// brokenShare is shared task routes that cannot be reached.
type brokenShare struct{ routes, reads int }

func (b *brokenShare) Route(context.Context, string, string, string, time.Duration) (string, error) {
	b.routes++
	return "", errors.New("redis: connection refused")
}

func (b *brokenShare) Routed(context.Context, string, string) (string, time.Duration, error) {
	b.reads++
	return "", 0, errors.New("redis: connection refused")
}

// When the shared routes cannot be reached, a task still routes through
// the replica that relayed it, and a task this replica never saw is
// unknown here, as without Redis: the call that made it is not failed.
func TestATaskRoutesThroughItsReplicaWhenTheSharedRoutesAreDown(t *testing.T) {
	c := NewClaims()
	share := &brokenShare{}
	c.ShareTasks(share, slog.New(slog.DiscardHandler))
	b := &Mirror{name: "b1", claims: c, log: slog.New(slog.DiscardHandler)}
	c.live["b1"] = b
	ctx := mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "alice"})
	if err := c.noteTask(ctx, b, json.RawMessage(`{"resultType":"task","taskId":"mine"}`)); err != nil {
		t.Fatalf("the task's call failed with the shared routes down: %v", err)
	}
	get := func(id string) *Mirror {
		_, got, _ := c.taskBackend(ctx, &mcp.Request{Method: "tasks/get", Params: json.RawMessage(`{"taskId":"` + id + `"}`)})
		return got
	}
	if get("mine") != b {
		t.Error("the task does not route through the replica that relayed it")
	}
	if get("elsewhere") != nil {
		t.Error("a task this replica never saw routes")
	}
	if share.routes != 1 || share.reads != 1 {
		t.Errorf("the shared routes were asked %d and read %d times, want once each", share.routes, share.reads)
	}
}

// A caller's task of a backend that is down here is answered as the
// backend's unavailability (-32603, data.backend), not as an unknown
// task: the backend may come back with the task.
func TestATaskOfABackendThatIsDownIsUnavailableNotUnknown(t *testing.T) {
	c := NewClaims()
	b := &Mirror{name: "b1", claims: c}
	ctx := mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "alice"})
	if err := c.noteTask(ctx, b, json.RawMessage(`{"resultType":"task","taskId":"t1"}`)); err != nil {
		t.Fatal(err)
	}
	next := mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return nil, errors.New("reached the engine")
	})
	_, err := c.RelayTasks(next).ServeMCP(ctx, &mcp.Request{Method: "tasks/get", Params: json.RawMessage(`{"taskId":"t1"}`)})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError || !strings.Contains(string(je.Data), `"backend":"b1"`) {
		t.Errorf("tasks/get of a down backend's task: %v, want -32603 naming b1", err)
	}
}
