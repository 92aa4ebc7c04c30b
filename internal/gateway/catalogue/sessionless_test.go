// sessionless_test.go pins the relay to a backend that speaks 2026-07-28:
// its InputRequiredResults reach a 2026-07-28 caller with a requestState
// sealed for that caller, and are asked of a 2025 caller on its session,
// the gateway retrying for it; the caller's reserved _meta keys never go
// up as they came.

package catalogue_test

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// sessionlessConn serves a Client's requests with s.ServeSessionless, as
// a 2026-07-28 transport does: each on its own, no session.
type sessionlessConn struct {
	s    *mcp.Server
	in   chan *jsonrpc.Message
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	seen []*jsonrpc.Message // every request, as it came
}

func (c *sessionlessConn) Write(ctx context.Context, m *jsonrpc.Message) error {
	m = m.Clone()
	c.mu.Lock()
	c.seen = append(c.seen, m)
	c.mu.Unlock()
	sr, ok := mcp.ReadSessionless(m)
	if !ok || !m.IsRequest() {
		return nil
	}
	go func() {
		sink := sinkFunc(func(_ context.Context, msg []byte) error {
			n, err := jsonrpc.Parse(append([]byte(nil), msg...))
			if err == nil {
				c.push(n)
			}
			return nil
		})
		if answer, err := jsonrpc.Parse(c.s.ServeSessionless(context.WithoutCancel(ctx), &sr, sink)); err == nil {
			c.push(answer)
		}
	}()
	return nil
}

type sinkFunc func(ctx context.Context, msg []byte) error

func (f sinkFunc) Send(ctx context.Context, msg []byte) error { return f(ctx, msg) }

func (c *sessionlessConn) push(m *jsonrpc.Message) {
	select {
	case c.in <- m:
	case <-c.done:
	}
}

func (c *sessionlessConn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *sessionlessConn) Close() error { c.once.Do(func() { close(c.done) }); return nil }

func (c *sessionlessConn) requests(method string) []*jsonrpc.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*jsonrpc.Message
	for _, m := range c.seen {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// mrtrBackend asks twice, the 2026-07-28 way: each round's answers come
// with the retry, and it asks the second question once it has the first.
func mrtrBackend(t *testing.T) *mcp.Server {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "mrtr", Version: "1"}})
	ask := func(q string) mcp.Input {
		return mcp.Input{Key: q, Method: "sampling/createMessage", Params: map[string]any{"messages": []any{map[string]any{"role": "user",
			"content": map[string]string{"type": "text", "text": q + "?"}}}, "maxTokens": 10}}
	}
	must(t, s.AddTools(&mcp.Tool{Name: "ask_twice", SkipValidation: true,
		Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			first, err := r.Ask(ctx, ask("first"))
			if err != nil {
				return nil, err
			}
			second, err := r.Ask(ctx, ask("second"))
			if err != nil {
				return nil, err
			}
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(first[0]) + " | " + string(second[0]))}})
		}}))
	return s
}

// relayedSessionless relays back, spoken to sessionless, into a front
// whose 2025 session declared capabilities.
func relayedSessionless(t testing.TB, back *mcp.Server, capabilities string) (*front, *sessionlessConn) {
	t.Helper()
	return relayedSessionlessWith(t, back, capabilities, catalogue.NewClaims())
}

func relayedSessionlessWith(t testing.TB, back *mcp.Server, capabilities string, claims *catalogue.Claims) (*front, *sessionlessConn) {
	t.Helper()
	f := newFrontCaps(t, capabilities)
	return f, addSessionless(t, f, "b1", back, claims)
}

// addSessionless relays back, spoken to sessionless, into f as backend
// name, and returns what reached it.
func addSessionless(t testing.TB, f *front, name string, back *mcp.Server, claims *catalogue.Claims) *sessionlessConn {
	t.Helper()
	inf := catalogue.NewInflight()
	conn := &sessionlessConn{s: back, in: make(chan *jsonrpc.Message, 64), done: make(chan struct{})}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "relay-test", Version: "1"},
		Capabilities: upstream.ClientCapabilities(), OnRequest: inf.OnRequest,
		OnNotification: func(m *jsonrpc.Message) { inf.OnNotification(m) }})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if era, err := c.Connect(ctx, mcp.EraAuto); err != nil || era != mcp.EraSessionless {
		t.Fatalf("Connect: %q %v", era, err)
	}
	must(t, catalogue.New(name, c, catalogue.Options{Inflight: inf, Claims: claims}).Sync(ctx, f.Server))
	return conn
}

func sampled(text string) string {
	return `{"role":"assistant","content":{"type":"text","text":"` + text + `"},"model":"m"}`
}

func TestASessionlessBackendsInputRequestsReachAModernCallerSealed(t *testing.T) {
	f, conn := relayedSessionless(t, mrtrBackend(t), "{}")
	call := func(who, extra string) *jsonrpc.Message {
		return mcptest.Sessionless(t, f.Server, who, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"b1__ask_twice","arguments":{}`+extra+
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`)
	}
	reqs, state := mcptest.InputRequired(t, call("alice", ""))
	if _, ok := reqs["first"]; !ok || len(reqs) != 1 {
		t.Fatalf("round 1: %v, want the backend's question under its own key", reqs)
	}
	reqs, state = mcptest.InputRequired(t, call("alice", `,"inputResponses":{"first":`+sampled("one")+`},"requestState":"`+state+`"`))
	if _, ok := reqs["second"]; !ok || state == "" {
		t.Fatalf("round 2: %v state %q", reqs, state)
	}
	upstream, _ := jsonrpc.LookupString(conn.requests("tools/call")[1].Params, "requestState")
	// The backend's own state never reaches the caller: it holds the
	// first answer, and is sealed for alice in what she got. (A sealed
	// state is random base64, which may hold the letters "one" by chance:
	// what must not be in it is the backend's state.)
	if upstream == "" || strings.Contains(state, upstream) {
		t.Fatalf("the caller got the backend's requestState as it is: %q", state)
	}
	for _, bad := range []struct{ who, state string }{{"mallory", state}, {"alice", state[:len(state)-2] + "xx"}} {
		a := call(bad.who, `,"inputResponses":{"second":`+sampled("two")+`},"requestState":"`+bad.state+`"`)
		if e, _ := a.ErrorObject(); e == nil || e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("the state as %s, or altered: %s %s, want -32602", bad.who, a.Result, a.Error)
		}
	}
	done := call("alice", `,"inputResponses":{"second":`+sampled("two")+`},"requestState":"`+state+`"`)
	if done.Error != nil || !strings.Contains(string(done.Result), "one") || !strings.Contains(string(done.Result), "two") {
		t.Fatalf("the last round: %s %s, want the result with both answers", done.Result, done.Error)
	}
	// What went up carried the gateway's revision and the caller's
	// capabilities, and the backend's own state on the retry.
	ups := conn.requests("tools/call")
	final := ups[len(ups)-1].Params
	meta, _ := jsonrpc.Lookup(final, "_meta")
	if v, _ := jsonrpc.LookupString(meta, mcp.MetaProtocolVersion); v != mcp.Version20260728 ||
		!strings.Contains(string(meta), `"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}`) {
		t.Errorf("upstream _meta %s", meta)
	}
	if s, _ := jsonrpc.LookupString(final, "requestState"); s == state || s == "" {
		t.Errorf("upstream requestState %q, want the backend's own", s)
	}
}

func TestASessionCallerIsAskedOnItsSessionForASessionlessBackend(t *testing.T) {
	f, conn := relayedSessionless(t, mrtrBackend(t), `{"sampling":{}}`)
	caller := &callerSink{f: f, answer: sampled("yes")}
	m := frontCall(t, context.Background(), f, caller, `{"name":"b1__ask_twice","arguments":{}}`)
	if m == nil || m.Error != nil || strings.Count(toolText(t, m.Result), "yes") != 2 {
		t.Fatalf("the call: %+v, want the result with the caller's two answers", m)
	}
	asks := 0
	for _, r := range caller.all() {
		if r.Method == "sampling/createMessage" {
			asks++
		}
	}
	if asks != 2 {
		t.Errorf("the caller was asked %d times on its session, want 2", asks)
	}
	if n := len(conn.requests("tools/call")); n != 3 {
		t.Errorf("the backend got %d rounds, want 3", n)
	}
}

// A 2025 caller that did not declare what the backend asks for is
// answered -32021, saying what was asked.
func TestASessionCallerWithoutTheCapabilityIsAnsweredMissingCapability(t *testing.T) {
	back := mrtrBackend(t)
	// The backend is told the caller's capabilities; this one asks anyway.
	must(t, back.AddTools(&mcp.Tool{Name: "ask_anyway", SkipValidation: true,
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"?"}}}}`), nil
		}}))
	f2, _ := relayedSessionless(t, back, `{"roots":{}}`)
	m := frontCall(t, context.Background(), f2, &callerSink{f: f2}, `{"name":"b1__ask_anyway","arguments":{}}`)
	if e, _ := m.ErrorObject(); e == nil || e.Code != mcp.CodeMissingRequiredCapability || !strings.Contains(e.Message, "elicitation") {
		t.Fatalf("got %s %s, want -32021 naming elicitation", m.Result, m.Error)
	}
}

// The revision's reserved _meta keys a caller sends describe its own
// connection: a 2025 backend never sees them (a backend that also speaks
// 2026-07-28 would take the call for a sessionless one); other _meta
// members go up as they came.
func TestReservedMetaKeysAreNotPassedToASessionBackend(t *testing.T) {
	back, _ := newBackRig(t)
	var got json.RawMessage
	must(t, back.AddTools(&mcp.Tool{Name: "meta", SkipValidation: true,
		Handler: func(_ context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			got, _ = jsonrpc.Lookup(r.Params, "_meta")
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}})
		}}))
	f, _ := relayedBothWays(t, back, nil)
	m := frontCall(t, context.Background(), f, &callerSink{f: f},
		`{"name":"b1__meta","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug","x.example/k":1}}`)
	if m == nil || m.Error != nil {
		t.Fatalf("call: %+v", m)
	}
	if strings.Contains(string(got), "io.modelcontextprotocol/") || !strings.Contains(string(got), `"x.example/k":1`) {
		t.Errorf("the backend saw _meta %s", got)
	}
	// A 2026-07-28 caller's call to the 2025 backend (park.go) likewise.
	got = nil
	a := mcptest.Sessionless(t, f.Server, "alice", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"b1__meta","arguments":{},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"x.example/k":2}}}`)
	if a.Error != nil {
		t.Fatalf("modern call: %s", a.Error)
	}
	if strings.Contains(string(got), "io.modelcontextprotocol/") || !strings.Contains(string(got), `"x.example/k":2`) {
		t.Errorf("the backend saw _meta %s from a 2026-07-28 caller", got)
	}
}

// Params that hold none of the reserved _meta keys reach a 2025 backend
// byte for byte, whatever else names the keys' prefix: an argument, a key
// of the caller's own under the prefix (the tasks extension has one), a
// value. A reserved key is dropped however its name is escaped: the
// backend decodes what it receives.
func TestOnlyReservedMetaKeysAreDroppedOnTheWayToASessionBackend(t *testing.T) {
	back, _ := newBackRig(t)
	var got json.RawMessage
	must(t, back.AddTools(&mcp.Tool{Name: "meta", SkipValidation: true,
		Handler: func(_ context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			got = slices.Clone(r.Params)
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}})
		}}))
	f, _ := relayedBothWays(t, back, nil)
	const args = `"arguments":{"text":"_meta keys such as io.modelcontextprotocol/protocolVersion are reserved"}`
	for _, c := range []struct{ name, params, want string }{
		{"an argument names the prefix", `{"name":"b1__meta",` + args + `}`, `{"name":"meta",` + args + `}`},
		{"a key of the caller's under the prefix", `{"name":"b1__meta", "_meta": {"io.modelcontextprotocol/related-task": {"taskId":"t1"}},` + args + `}`,
			`{"name":"meta", "_meta": {"io.modelcontextprotocol/related-task": {"taskId":"t1"}},` + args + `}`},
		{"a value names a reserved key", `{"name":"b1__meta",` + args + `,"_meta":{"note":"io.modelcontextprotocol/clientInfo"}}`,
			`{"name":"meta",` + args + `,"_meta":{"note":"io.modelcontextprotocol/clientInfo"}}`},
		{"a _meta that is no object", `{"name":"b1__meta",` + args + `,"_meta":"io.modelcontextprotocol/logLevel"}`,
			`{"name":"meta",` + args + `,"_meta":"io.modelcontextprotocol/logLevel"}`},
		{"a reserved key", `{"name":"b1__meta",` + args + `,"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"x"},"k":1}}`,
			`{"_meta":{"k":1},"name":"meta",` + args + `}`},
		{"a reserved key with its slash escaped", `{"name":"b1__meta",` + args + `,"_meta":{"io.modelcontextprotocol\/clientInfo":{"name":"x"},"k":1}}`,
			`{"_meta":{"k":1},"name":"meta",` + args + `}`},
		{"a reserved key spelled in \\u escapes", `{"name":"b1__meta",` + args + `,"_meta":{"\u0069o.modelcontextprotocol/logLevel":"debug"}}`,
			`{"_meta":{},"name":"meta",` + args + `}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got = nil
			m := frontCall(t, context.Background(), f, &callerSink{f: f}, c.params)
			if m == nil || m.Error != nil {
				t.Fatalf("call: %+v", m)
			}
			if string(got) != c.want {
				t.Errorf("the backend got params\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// relayedTasker relays a sessionless backend whose tool wait runs as a
// task until cancelled, tasks relayed (RelayTasks), and returns a call of
// the front as who and what reached the backend.
func relayedTasker(t *testing.T) (call func(who, method, params string) *jsonrpc.Message, conn *sessionlessConn) {
	t.Helper()
	claims := catalogue.NewClaims()
	f, conn := relayedSessionlessWith(t, taskerServer(t), "{}", claims)
	f.Use(claims.RelayTasks)
	return taskCaller(t, f), conn
}

// taskerServer is a backend whose tool wait runs as a task until
// cancelled.
func taskerServer(t *testing.T) *mcp.Server {
	back := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "tasker", Version: "1"}})
	t.Cleanup(back.EndTasks)
	must(t, back.AddTools(&mcp.Tool{Name: "wait", SkipValidation: true, TaskSupport: mcp.TaskOptional,
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return nil, mcp.RunAsTask(func(ctx context.Context, _ *mcp.Request) (json.RawMessage, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})
		}}))
	return back
}

// taskCaller is a call of f's by a 2026-07-28 caller who declared the
// tasks extension.
func taskCaller(t *testing.T, f *front) func(who, method, params string) *jsonrpc.Message {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	return func(who, method, params string) *jsonrpc.Message {
		return mcptest.Sessionless(t, f.Server, who, `{"jsonrpc":"2.0","id":3,"method":"`+method+`","params":{`+params+`,`+meta+`}}`)
	}
}

// A task a sessionless backend made is its caller's: the caller's
// tasks/get and tasks/cancel reach the backend; another caller naming the
// id is answered by the front as for an unknown task.
func TestARelayedTaskIsItsCallersAlone(t *testing.T) {
	call, conn := relayedTasker(t)
	created := call("alice", "tools/call", `"name":"b1__wait","arguments":{}`)
	id, _ := jsonrpc.LookupString(created.Result, "taskId")
	if rt, _ := jsonrpc.LookupString(created.Result, "resultType"); rt != "task" || id == "" {
		t.Fatalf("tools/call: %s %s, want the backend's CreateTaskResult", created.Result, created.Error)
	}
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if a := call("mallory", m, `"taskId":"`+id+`"`); a.Error == nil || !strings.Contains(string(a.Error), "-32602") {
			t.Errorf("%s of alice's task by mallory: %s %s, want -32602", m, a.Result, a.Error)
		}
	}
	if n := len(conn.requests("tasks/get")) + len(conn.requests("tasks/cancel")); n != 0 {
		t.Errorf("mallory's requests reached the backend (%d)", n)
	}
	if a := call("alice", "tasks/get", `"taskId":"`+id+`"`); !strings.Contains(string(a.Result), `"status":"working"`) {
		t.Errorf("alice's tasks/get: %s %s", a.Result, a.Error)
	}
	if a := call("alice", "tasks/cancel", `"taskId":"`+id+`"`); string(a.Result) != `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"front","version":"1"}},"resultType":"complete"}` {
		t.Errorf("alice's tasks/cancel: %s %s", a.Result, a.Error)
	}
	if a := call("alice", "tasks/get", `"taskId":"`+id+`"`); !strings.Contains(string(a.Result), `"status":"cancelled"`) {
		t.Errorf("after the cancel: %s %s", a.Result, a.Error)
	}
}

// A task id is routed, for its caller, to the backend that made it, and
// no other backend takes the route. A second backend answering the same
// caller with the same id is refused, -32603 naming it: had it taken the
// route, the caller's tasks/update answers would have gone to it. The
// same id made for another caller routes apart, and displaces nothing.
func TestATaskIdIsNoOtherBackendsToTake(t *testing.T) {
	tasker := taskerServer(t)
	var mu sync.Mutex
	var forged json.RawMessage // the thief's answer: the tasker's CreateTaskResult
	thief := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "thief", Version: "1"}})
	must(t, thief.AddTools(&mcp.Tool{Name: "take", SkipValidation: true,
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) { return nil, nil }}))
	thief.Handle("tools/call", mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		return forged, nil
	}))
	claims := catalogue.NewClaims()
	f, taskerSaw := relayedSessionlessWith(t, tasker, "{}", claims)
	thiefSaw := addSessionless(t, f, "b2", thief, claims)
	f.Use(claims.RelayTasks)
	call := taskCaller(t, f)

	created := call("alice", "tools/call", `"name":"b1__wait","arguments":{}`)
	id, _ := jsonrpc.LookupString(created.Result, "taskId")
	if id == "" {
		t.Fatalf("tools/call: %s %s, want the tasker's CreateTaskResult", created.Result, created.Error)
	}
	mu.Lock()
	forged = created.Result
	mu.Unlock()

	taken := call("alice", "tools/call", `"name":"b2__take","arguments":{}`)
	if e, _ := taken.ErrorObject(); e == nil || e.Code != jsonrpc.CodeInternalError || !strings.Contains(string(e.Data), `"backend":"b2"`) {
		t.Errorf("b2 answering alice with b1's task id: %s %s, want -32603 naming b2", taken.Result, taken.Error)
	}
	working := func(who string, saw *sessionlessConn, n int) {
		t.Helper()
		a := call(who, "tasks/get", `"taskId":"`+id+`"`)
		if saw == taskerSaw && !strings.Contains(string(a.Result), `"status":"working"`) {
			t.Errorf("%s's tasks/get: %s %s, want the tasker's working task", who, a.Result, a.Error)
		}
		if got := len(saw.requests("tasks/get")); got != n {
			t.Errorf("%s's tasks/get: its backend has seen %d, want %d", who, got, n)
		}
	}
	working("alice", taskerSaw, 1)

	if m := call("mallory", "tools/call", `"name":"b2__take","arguments":{}`); m.Error != nil {
		t.Fatalf("b2's task for mallory: %s", m.Error)
	}
	working("mallory", thiefSaw, 1)
	working("alice", taskerSaw, 2)
}

// A key of tasks/* params that folds to taskId (upper case, the Kelvin
// sign, the long s) never reaches the backend: a backend reading keys
// without case (Go's encoding/json) took {"taskId":"mine","TASKID":
// "alice's"} for alice's task while the gateway routed on the caller's
// own. And what does reach it is made from what was routed on: the id,
// the method's own fields and _meta, not the caller's bytes.
func TestATaskIsRoutedAndRelayedByTheOneIdTheGatewayRead(t *testing.T) {
	call, conn := relayedTasker(t)
	task := func(who string) string {
		created := call(who, "tools/call", `"name":"b1__wait","arguments":{}`)
		id, _ := jsonrpc.LookupString(created.Result, "taskId")
		if id == "" {
			t.Fatalf("tools/call by %s: %s %s", who, created.Result, created.Error)
		}
		return id
	}
	alices, mine := task("alice"), task("mallory")
	for _, tt := range []struct{ method, key string }{
		{"tasks/get", "TASKID"},
		{"tasks/get", "tas\u212aId"},
		{"tasks/cancel", "TaskId"},
		{"tasks/update", "ta\u017fkId"},
	} {
		params := `"taskId":"` + mine + `","` + tt.key + `":"` + alices + `","inputResponses":{}`
		a := call("mallory", tt.method, params)
		var e jsonrpc.Error
		if a.Error == nil || json.Unmarshal(a.Error, &e) != nil || e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(string(e.Data), "ambiguous_key") {
			t.Errorf("%s with %s: %s %s, want -32602 ambiguous_key", tt.method, tt.key, a.Result, a.Error)
		}
	}
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		if got := conn.requests(m); len(got) != 0 {
			t.Errorf("%d %s requests with a folded taskId reached the backend: %s", len(got), m, got[0].Params)
		}
	}

	// The caller's own request: only taskId, the method's fields and _meta
	// are relayed.
	if a := call("mallory", "tasks/get", `"taskId":"`+mine+`","inputResponses":{"x":1},"extra":"not relayed"`); a.Error != nil {
		t.Fatalf("mallory's tasks/get of her own task: %s", a.Error)
	}
	got := conn.requests("tasks/get")
	if len(got) != 1 {
		t.Fatalf("%d tasks/get reached the backend, want 1", len(got))
	}
	var keys []string
	_ = jsonrpc.Members(got[0].Params, func(k string, _ json.RawMessage) bool { keys = append(keys, k); return true })
	if slices.Sort(keys); strings.Join(keys, ",") != "_meta,taskId" {
		t.Errorf("tasks/get relayed with %s, want taskId and _meta alone", got[0].Params)
	}
	if id, _ := jsonrpc.LookupString(got[0].Params, "taskId"); id != mine {
		t.Errorf("tasks/get relayed for task %q, want %q", id, mine)
	}
}

// A relayed read from a backend of the revision keeps its hints, but its
// cacheScope becomes private: what the gateway answers depends on the
// caller's role, so no cache shared between callers may keep it.
func TestARelayedReadIsPrivateWhateverTheBackendSays(t *testing.T) {
	back := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "public", Version: "1"}})
	must(t, back.AddResources(&mcp.Resource{URI: "mem://shared", Name: "shared",
		Read: func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
			return nil, nil // answered by the handler below
		}}))
	back.Handle("resources/read", mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return json.RawMessage(`{"resultType":"complete","ttlMs":60000,"cacheScope":"public","contents":[{"uri":"mem://shared","text":"x"}]}`), nil
	}))
	f, _ := relayedSessionless(t, back, "{}")
	a := mcptest.Sessionless(t, f.Server, "alice", `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"mem://shared",`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if a.Error != nil || !strings.Contains(string(a.Result), `"cacheScope":"private"`) || !strings.Contains(string(a.Result), `"ttlMs":60000`) ||
		strings.Contains(string(a.Result), `"public"`) {
		t.Errorf("relayed read: %s %s, want the backend's ttlMs and cacheScope private", a.Result, a.Error)
	}
}

// A relayed result of the revision names the gateway as its server, not
// the backend: the caller talks to the gateway. Every other member of
// its _meta stays.
func TestARelayedResultNamesTheGatewayAsItsServer(t *testing.T) {
	back := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "backend", Version: "9"}})
	back.Handle("tools/call", mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return json.RawMessage(`{"resultType":"complete","_meta":{"x":1,"io.modelcontextprotocol/serverInfo":{"name":"backend","version":"9"}},"content":[]}`), nil
	}))
	must(t, back.AddTools(&mcp.Tool{Name: "t", SkipValidation: true,
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) { return nil, nil }}))
	f, _ := relayedSessionless(t, back, "{}")
	a := mcptest.Sessionless(t, f.Server, "alice", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"b1__t","arguments":{},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	var res struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if a.Error != nil || json.Unmarshal(a.Result, &res) != nil {
		t.Fatalf("relayed call: %s %s", a.Result, a.Error)
	}
	if info := string(res.Meta["io.modelcontextprotocol/serverInfo"]); strings.Contains(info, "backend") || !strings.Contains(info, `"name"`) {
		t.Errorf("relayed call's serverInfo %s, want the gateway's (result %s)", info, a.Result)
	}
	if string(res.Meta["x"]) != "1" || strings.Count(string(a.Result), "serverInfo") != 1 {
		t.Errorf("relayed call's _meta %s: want x kept and one serverInfo", a.Result)
	}
}
