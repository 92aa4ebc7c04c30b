// tasks.go is the tasks extension of 2026-07-28
// (io.modelcontextprotocol/tasks, SEP-2663). A tools/call the server
// decides to run as a task is answered at once with a CreateTaskResult: a
// taskId and a status. The client polls tasks/get until the task ends,
// answers what the task asks with tasks/update, and may tasks/cancel it.
//
// A tool says it can run as a task (Tool.TaskSupport); its handler decides
// when, by returning RunAsTask(rest) — after asking in the multi
// round-trip way first, if it needs to — and rest then runs in the
// background. A client that did not declare the extension never gets a
// task: rest runs at once for an optional tool, and a required one is
// refused with -32021. Inside a task, Request.Ask parks the task in
// input_required until tasks/update has answered every question.
//
// A task belongs to the caller that made it: another caller's tasks/get
// of its id is answered as for an unknown id. A finished task is kept for
// its ttlMs.

package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// TasksExtension is the extension's name, under capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Values of Tool.TaskSupport.
const (
	TaskOptional = "optional" // a task when the client can take one
	TaskRequired = "required" // a task, or -32021
)

// The statuses of a task.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

const (
	taskTTL          = 10 * time.Minute
	taskPollInterval = 250 * time.Millisecond
	maxTasksPerOwner = 256
)

// TaskFunc is the part of a tool call that runs as a task.
type TaskFunc func(ctx context.Context, r *Request) (json.RawMessage, error)

// runAsTask is what RunAsTask returns: the handler's way of saying the
// rest of the call is a task.
type runAsTask struct{ rest TaskFunc }

func (*runAsTask) Error() string { return "mcp: the call continues as a task" }

// RunAsTask is returned by a tool handler, as its error, to run rest as
// a task (for a tool with TaskSupport; for any other, and for a client
// without the extension, rest runs at once as the call).
func RunAsTask(rest TaskFunc) error { return &runAsTask{rest} }

// task is one task.
type task struct {
	id, owner string
	created   time.Time
	cancel    context.CancelFunc

	mu       sync.Mutex
	updated  time.Time
	status   string
	result   json.RawMessage
	err      *jsonrpc.Error
	pending  map[string]Input           // what it asks, by key, until answered
	answers  map[string]json.RawMessage // what tasks/update gave
	answered chan struct{}              // closed once every pending key has an answer
}

// tasks are a server's tasks.
type tasks struct {
	mu sync.Mutex
	m  map[string]*task
	wg sync.WaitGroup // the tasks running
}

// EndTasks cancels every task still running and waits for them (a server
// shutting down). Their callers find them cancelled.
func (s *Server) EndTasks() {
	s.tasks.mu.Lock()
	for _, t := range s.tasks.m {
		t.mu.Lock()
		switch t.status {
		case TaskCompleted, TaskFailed, TaskCancelled:
		default:
			t.status, t.updated, t.pending = TaskCancelled, time.Now(), nil
		}
		t.mu.Unlock()
		t.cancel()
	}
	s.tasks.mu.Unlock()
	s.tasks.wg.Wait()
}

// clientTakesTasks reports whether r's client declared the extension.
func clientTakesTasks(r *Request) bool {
	if r.meta == nil {
		return false
	}
	ext, _ := jsonrpc.Lookup(r.meta.capabilities, "extensions")
	if len(ext) == 0 || ext[0] != '{' {
		return false
	}
	v, _ := jsonrpc.Lookup(ext, TasksExtension)
	return len(v) > 0 && string(v) != "null"
}

// errTasksNotDeclared is -32021 for a client without the extension.
func errTasksNotDeclared(what string) *jsonrpc.Error {
	return jsonrpc.NewError(CodeMissingRequiredCapability, what+" needs the "+TasksExtension+" extension, which the client did not declare",
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]struct{}{TasksExtension: {}}}})
}

// startTask runs rest as a task for r's caller and returns the
// CreateTaskResult. The task is in the table before the result is made,
// so a tasks/get right after it finds the task.
func (s *Server) startTask(ctx context.Context, r *Request, rest TaskFunc) (json.RawMessage, error) {
	owner := principalOf(ctx)
	now := time.Now()
	s.tasks.mu.Lock()
	if s.tasks.m == nil {
		s.tasks.m = map[string]*task{}
	}
	s.tasks.sweep(now)
	n := 0
	for _, t := range s.tasks.m {
		if t.owner == owner {
			n++
		}
	}
	if n >= maxTasksPerOwner {
		s.tasks.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "too many tasks: finish or cancel some first",
			map[string]any{"kind": KindTaskLimit, "limit": maxTasksPerOwner})
	}
	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t := &task{id: newTaskID(), owner: owner, created: now, updated: now, status: TaskWorking, cancel: cancel}
	s.tasks.m[t.id] = t
	s.tasks.wg.Add(1)
	s.tasks.mu.Unlock()

	// The task's request has no stream: what it would log or report as
	// progress has nowhere to go. Its questions go to the task (Ask).
	tr := &Request{ID: r.ID, Method: r.Method, Params: r.Params, metaRaw: r.metaRaw, target: r.target, targeted: r.targeted,
		sink: discardSink{}, meta: &requestMeta{server: s, version: r.Version(), capabilities: r.ClientCapabilities(), task: t}}
	created := t.createResult() // as created: working, whatever the task does next
	go func() {
		defer s.tasks.wg.Done()
		defer cancel()
		res, err := runTask(tctx, tr, rest)
		t.finish(res, err, s)
	}()
	return created, nil
}

func runTask(ctx context.Context, r *Request, rest TaskFunc) (res json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error")
		}
	}()
	return rest(ctx, r)
}

type discardSink struct{}

func (discardSink) Send(context.Context, []byte) error { return nil }

func newTaskID() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return "task-" + base64.RawURLEncoding.EncodeToString(b)
}

// finish records how the task ended: a result (a tool's error result
// too) completes it, a protocol error fails it, and a cancelled one stays
// cancelled.
func (t *task) finish(res json.RawMessage, err error, s *Server) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == TaskCancelled {
		return
	}
	t.updated = time.Now()
	var je *jsonrpc.Error
	switch {
	case err == nil:
		t.status, t.result = TaskCompleted, res
	case errors.Is(err, context.Canceled):
		t.status = TaskCancelled
	case errors.As(err, &je):
		t.status, t.err = TaskFailed, je
	default:
		s.log.Error("mcp task failed", "err", err)
		t.status, t.err = TaskFailed, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error")
	}
	t.pending = nil
}

// sweep forgets tasks older than their TTL (t.mu held by no one; s.tasks.mu
// by the caller).
func (ts *tasks) sweep(now time.Time) {
	for id, t := range ts.m {
		if now.Sub(t.created) > taskTTL {
			t.cancel()
			delete(ts.m, id)
		}
	}
}

// lookup is the caller's task id, or -32602 as for an unknown one.
func (s *Server) lookupTask(ctx context.Context, params json.RawMessage) (*task, error) {
	id, ok := jsonrpc.LookupString(params, "taskId")
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: taskId is required and must be a string", nil)
	}
	s.tasks.mu.Lock()
	s.tasks.sweep(time.Now())
	t := s.tasks.m[id]
	s.tasks.mu.Unlock()
	if t == nil || t.owner != principalOf(ctx) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: unknown taskId", map[string]string{"taskId": id})
	}
	return t, nil
}

// ask parks the task until every input has an answer from tasks/update.
func (t *task) ask(ctx context.Context, inputs []Input) ([]json.RawMessage, error) {
	t.mu.Lock()
	if t.answers == nil {
		t.answers = map[string]json.RawMessage{}
	}
	t.pending = map[string]Input{}
	for _, in := range inputs {
		if _, ok := t.answers[in.Key]; !ok {
			t.pending[in.Key] = in
		}
	}
	wait := make(chan struct{})
	if len(t.pending) == 0 {
		close(wait)
	} else {
		t.status, t.updated, t.answered = TaskInputRequired, time.Now(), wait
	}
	t.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]json.RawMessage, len(inputs))
	for i, in := range inputs {
		out[i] = t.answers[in.Key]
		delete(t.answers, in.Key) // a question asked again is asked again
	}
	return out, nil
}

// update takes the answers of a tasks/update: those for pending keys are
// kept (others ignored), and once none is pending the task goes on.
func (t *task) update(responses json.RawMessage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_ = jsonrpc.Members(responses, func(k string, v json.RawMessage) bool {
		if _, ok := t.pending[k]; ok {
			t.answers[k] = append(json.RawMessage(nil), v...)
			delete(t.pending, k)
		}
		return true
	})
	if t.status == TaskInputRequired && len(t.pending) == 0 && t.answered != nil {
		t.status, t.updated = TaskWorking, time.Now()
		close(t.answered)
		t.answered = nil
	}
}

// envelope is the Task members every task answer carries.
func (t *task) envelope(b []byte) []byte {
	b = append(b, `"taskId":`...)
	b = jsonrpc.AppendString(b, t.id)
	b = append(b, `,"status":`...)
	b = jsonrpc.AppendString(b, t.status)
	b = append(b, `,"createdAt":`...)
	b = jsonrpc.AppendString(b, t.created.UTC().Format(time.RFC3339Nano))
	b = append(b, `,"lastUpdatedAt":`...)
	b = jsonrpc.AppendString(b, t.updated.UTC().Format(time.RFC3339Nano))
	b = append(b, `,"ttlMs":`...)
	b = strconv.AppendInt(b, taskTTL.Milliseconds(), 10)
	b = append(b, `,"pollIntervalMs":`...)
	return strconv.AppendInt(b, taskPollInterval.Milliseconds(), 10)
}

// createResult is the CreateTaskResult: the task, flat, nothing more.
func (t *task) createResult() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := []byte(`{"resultType":"task",`)
	return append(t.envelope(b), '}')
}

// detailed is tasks/get's answer: the task, with what it asks while it
// waits for input, its result once completed, its error once failed.
func (t *task) detailed() (json.RawMessage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.envelope([]byte(`{"resultType":"complete",`))
	switch t.status {
	case TaskInputRequired:
		b = append(b, `,"inputRequests":{`...)
		first := true
		for k, in := range t.pending {
			params, err := marshalParams(in.Params)
			if err != nil {
				return nil, err
			}
			if params == nil {
				params = emptyResult
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = jsonrpc.AppendString(b, k)
			b = append(b, `:{"method":`...)
			b = jsonrpc.AppendString(b, in.Method)
			b = append(b, `,"params":`...)
			b = append(b, params...)
			b = append(b, '}')
		}
		b = append(b, '}')
	case TaskCompleted:
		b = append(b, `,"result":`...)
		b = append(b, t.result...)
	case TaskFailed:
		b = append(b, `,"error":`...)
		b = t.err.AppendJSON(b)
	}
	return append(b, '}'), nil
}

// taskAck is the answer to tasks/update and tasks/cancel.
var taskAck = json.RawMessage(`{"resultType":"complete"}`)

func (s *Server) serveTasksGet(ctx context.Context, r *Request) (json.RawMessage, error) {
	t, err := s.taskFor(ctx, r)
	if err != nil {
		return nil, err
	}
	return t.detailed()
}

func (s *Server) serveTasksUpdate(ctx context.Context, r *Request) (json.RawMessage, error) {
	t, err := s.taskFor(ctx, r)
	if err != nil {
		return nil, err
	}
	responses, _ := jsonrpc.Lookup(r.Params, "inputResponses")
	if len(responses) == 0 || responses[0] != '{' {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: inputResponses is required and must be an object", nil)
	}
	t.update(responses)
	return taskAck, nil
}

func (s *Server) serveTasksCancel(ctx context.Context, r *Request) (json.RawMessage, error) {
	t, err := s.taskFor(ctx, r)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	switch t.status {
	case TaskCompleted, TaskFailed, TaskCancelled:
	default:
		t.status, t.updated, t.pending = TaskCancelled, time.Now(), nil
		t.cancel()
	}
	t.mu.Unlock()
	return taskAck, nil
}

// taskFor is the task a tasks/* request names, for a sessionless client
// that declared the extension.
func (s *Server) taskFor(ctx context.Context, r *Request) (*task, error) {
	if r.meta == nil || r.meta.stateless {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+r.Method, map[string]string{"method": r.Method})
	}
	if !clientTakesTasks(r) {
		return nil, errTasksNotDeclared(r.Method)
	}
	return s.lookupTask(ctx, r.Params)
}

// toolExecution is a tool definition's execution member.
type toolExecution struct {
	TaskSupport string `json:"taskSupport"`
}

func (t *Tool) execution() *toolExecution {
	if t.TaskSupport == "" {
		return nil
	}
	return &toolExecution{t.TaskSupport}
}

// withTasksExtension adds the extension to server capabilities (those of
// server/discover: initialize's 2025 era had tasks of its own kind).
func withTasksExtension(caps json.RawMessage) json.RawMessage {
	if len(caps) < 2 || caps[0] != '{' {
		return caps
	}
	out := make([]byte, 0, len(caps)+64)
	out = append(out, `{"extensions":{"`+TasksExtension+`":{}}`...)
	if rest := caps[1:]; len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, caps[1:]...)
}
