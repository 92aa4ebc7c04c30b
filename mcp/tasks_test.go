// tasks_test.go pins the tasks extension (SEP-2663) in the engine: who
// gets a task and who does not, what tasks/get shows at each status, that
// a task is its caller's alone, that tasks/update answers only what is
// asked, and that cancellation and failure end a task as they should.

package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

const (
	withTasks    = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	withoutTasks = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
)

// taskServer has an optional-task tool that waits for release (or asks
// first when asked to) and a required-task tool.
func taskServer(t *testing.T, release <-chan struct{}) *mcp.Server {
	s := newServer(t, mcp.Options{})
	must(t, s.AddTools(
		&mcp.Tool{Name: "job", SkipValidation: true, TaskSupport: mcp.TaskOptional,
			Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
				mode, _ := jsonrpc.LookupString(args, "mode")
				return nil, mcp.RunAsTask(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
					switch mode {
					case "ask":
						a, err := r.Ask(ctx, mcp.Input{Key: "a", Method: "elicitation/create", Params: map[string]string{"message": "a?"}},
							mcp.Input{Key: "b", Method: "elicitation/create", Params: map[string]string{"message": "b?"}})
						if err != nil {
							return nil, err
						}
						return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(a[0]) + "+" + string(a[1]))}})
					case "fail":
						return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "broken", nil)
					}
					select {
					case <-release:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("done")}})
				})
			}},
		&mcp.Tool{Name: "must_task", SkipValidation: true, TaskSupport: mcp.TaskRequired,
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				return nil, mcp.RunAsTask(func(context.Context, *mcp.Request) (json.RawMessage, error) {
					return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ran")}})
				})
			}}))
	return s
}

func taskCall(t *testing.T, s *mcp.Server, who, method, params string) *jsonrpc.Message {
	t.Helper()
	return mcptest.Sessionless(t, s, who, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`)
}

// pollTask gets the task until its status is want (or a terminal one).
func pollTask(t *testing.T, s *mcp.Server, who, id, want string) json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a := taskCall(t, s, who, "tasks/get", `{"taskId":"`+id+`",`+withTasks+`}`)
		if a.Error != nil {
			t.Fatalf("tasks/get: %s", a.Error)
		}
		status, _ := jsonrpc.LookupString(a.Result, "status")
		if status == want || status == mcp.TaskCompleted || status == mcp.TaskFailed || status == mcp.TaskCancelled {
			return a.Result
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %s, want %s", id, status, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestATaskIsCreatedOnlyForAClientThatDeclaredTheExtension(t *testing.T) {
	release := make(chan struct{})
	close(release)
	s := taskServer(t, release)
	created := taskCall(t, s, "alice", "tools/call", `{"name":"job","arguments":{},`+withTasks+`}`)
	for _, want := range []string{`"resultType":"task"`, `"taskId":"task-`, `"status":"working"`, `"ttlMs":600000`, `"pollIntervalMs":250`, `"createdAt":"`} {
		if !strings.Contains(string(created.Result), want) {
			t.Errorf("CreateTaskResult %s lacks %s", created.Result, want)
		}
	}
	for _, not := range []string{`"result"`, `"requestState"`, `"ttl":`, `"task":`} {
		if strings.Contains(string(created.Result), not) {
			t.Errorf("CreateTaskResult %s has %s", created.Result, not)
		}
	}
	sync := taskCall(t, s, "alice", "tools/call", `{"name":"job","arguments":{},`+withoutTasks+`}`)
	if rt, _ := jsonrpc.LookupString(sync.Result, "resultType"); rt != "complete" || !strings.Contains(string(sync.Result), "done") {
		t.Errorf("an optional task for a client without the extension: %s %s, want the result at once", sync.Result, sync.Error)
	}
	refused := taskCall(t, s, "alice", "tools/call", `{"name":"must_task","arguments":{},`+withoutTasks+`}`)
	if e, _ := refused.ErrorObject(); e == nil || e.Code != mcp.CodeMissingRequiredCapability ||
		!strings.Contains(string(e.Data), `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
		t.Errorf("a required task for a client without the extension: %s %s, want -32021 naming the extension", refused.Result, refused.Error)
	}
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		a := taskCall(t, s, "alice", m, `{"taskId":"x",`+withoutTasks+`}`)
		if e, _ := a.ErrorObject(); e == nil || e.Code != mcp.CodeMissingRequiredCapability {
			t.Errorf("%s without the extension: %s %s, want -32021", m, a.Result, a.Error)
		}
	}
}

func TestATaskIsItsCallersAlone(t *testing.T) {
	release := make(chan struct{})
	s := taskServer(t, release)
	id, _ := jsonrpc.LookupString(taskCall(t, s, "alice", "tools/call", `{"name":"job","arguments":{},`+withTasks+`}`).Result, "taskId")
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		a := taskCall(t, s, "mallory", m, `{"taskId":"`+id+`",`+withTasks+`}`)
		if e, _ := a.ErrorObject(); e == nil || e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s of alice's task by mallory: %s %s, want -32602 as for an unknown id", m, a.Result, a.Error)
		}
	}
	if got := pollTask(t, s, "alice", id, mcp.TaskWorking); !strings.Contains(string(got), `"status":"working"`) {
		t.Errorf("alice's task after mallory's tries: %s", got)
	}
	close(release)
	done := pollTask(t, s, "alice", id, mcp.TaskCompleted)
	if !strings.Contains(string(done), `"result":{`) || !strings.Contains(string(done), "done") {
		t.Errorf("completed task %s, want the tool's result inlined", done)
	}
}

func TestTasksUpdateAnswersOnlyWhatIsAskedAndTheTaskGoesOnWhenAllIs(t *testing.T) {
	s := taskServer(t, nil)
	id, _ := jsonrpc.LookupString(taskCall(t, s, "alice", "tools/call", `{"name":"job","arguments":{"mode":"ask"},`+withTasks+`}`).Result, "taskId")
	waiting := pollTask(t, s, "alice", id, mcp.TaskInputRequired)
	if !strings.Contains(string(waiting), `"a":{"method":"elicitation/create"`) || !strings.Contains(string(waiting), `"b":{`) {
		t.Fatalf("input_required task %s, want both questions", waiting)
	}
	update := func(responses string) {
		a := taskCall(t, s, "alice", "tasks/update", `{"taskId":"`+id+`","inputResponses":`+responses+`,`+withTasks+`}`)
		if string(a.Result) != taskAck {
			t.Fatalf("tasks/update: %s %s, want the bare ack", a.Result, a.Error)
		}
	}
	update(`{"a":{"action":"accept","content":{"v":1}},"unknown":{"x":1}}`)
	half := pollTask(t, s, "alice", id, mcp.TaskInputRequired)
	if strings.Contains(string(half), `"a":{`) || !strings.Contains(string(half), `"b":{`) || strings.Contains(string(half), "unknown") {
		t.Fatalf("after answering a: %s, want only b pending", half)
	}
	update(`{"b":{"action":"accept","content":{"v":2}}}`)
	done := pollTask(t, s, "alice", id, mcp.TaskCompleted)
	if !strings.Contains(string(done), `\"v\":1`) || !strings.Contains(string(done), `\"v\":2`) {
		t.Errorf("completed %s, want both answers in the result", done)
	}
}

func TestCancellingAndFailingEndATask(t *testing.T) {
	s := taskServer(t, make(chan struct{}))
	id, _ := jsonrpc.LookupString(taskCall(t, s, "alice", "tools/call", `{"name":"job","arguments":{},`+withTasks+`}`).Result, "taskId")
	for range 2 { // the second is on a terminal task: the same ack
		if a := taskCall(t, s, "alice", "tasks/cancel", `{"taskId":"`+id+`",`+withTasks+`}`); string(a.Result) != taskAck {
			t.Fatalf("tasks/cancel: %s %s", a.Result, a.Error)
		}
	}
	if got := pollTask(t, s, "alice", id, mcp.TaskCancelled); !strings.Contains(string(got), `"status":"cancelled"`) || strings.Contains(string(got), `"result"`) {
		t.Errorf("cancelled task %s", got)
	}
	id, _ = jsonrpc.LookupString(taskCall(t, s, "alice", "tools/call", `{"name":"job","arguments":{"mode":"fail"},`+withTasks+`}`).Result, "taskId")
	failed := pollTask(t, s, "alice", id, mcp.TaskFailed)
	if !strings.Contains(string(failed), `"status":"failed"`) || !strings.Contains(string(failed), `"error":{"code":-32603,"message":"broken"}`) || strings.Contains(string(failed), `"result"`) {
		t.Errorf("failed task %s, want the protocol error inlined and no result", failed)
	}
	if a := taskCall(t, s, "alice", "tasks/get", `{"taskId":"task-unknown",`+withTasks+`}`); a.Error == nil {
		t.Errorf("an unknown task: %s", a.Result)
	}
}

// taskAck is the answer to tasks/update and tasks/cancel: complete, and
// nothing but the server's identity.
const taskAck = `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-test","version":"0.0.1"}},"resultType":"complete"}`
