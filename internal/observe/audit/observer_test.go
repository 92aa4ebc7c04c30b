// middleware_test.go pins the audit observer through the real engine:
// one record per gated call, whatever became of it — ran, failed as a
// tool, refused by the gate, invalid, unknown, panicked — with the right
// outcome, code, kind, name and identity; none for any other method; and
// no argument value anywhere in a record.

package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/observe/audit"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// refusingGate refuses two tools the way the access package does: one
// for the role, one for the rate.
type refusingGate struct{}

func (refusingGate) Visible(context.Context, mcp.Entry) bool { return true }

func (refusingGate) Admit(_ context.Context, e mcp.Entry) error {
	switch e.Name {
	case "admin_only":
		return jsonrpc.NewError(jsonrpc.CodeForbidden, "forbidden: requires role admin",
			map[string]string{"kind": "forbidden", "requiredRole": "admin"})
	case "limited":
		return jsonrpc.NewError(jsonrpc.CodeRateLimited, "rate limited",
			map[string]any{"kind": "rate_limited", "retryAfterSeconds": 1})
	}
	return nil
}

// secret is passed as an argument value in every call that takes one.
const secret = "hunter2-s3cr3t-argument"

func textResult(text string) mcp.ToolHandler {
	return func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}})
	}
}

// explode is a tool that panics; named, so that the engine's log can be
// checked for the frame where the panic happened.
func explode(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
	panic("kaboom")
}

// auditedServer is a server whose calls are recorded to w.
func auditedServer(t testing.TB, l *audit.Log, logger *slog.Logger) *mcp.Server {
	t.Helper()
	srv := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "audit-test", Version: "1"}, Gate: refusingGate{}, Logger: logger,
		Observers: []mcp.Observer{audit.Observer(l)}})
	strict := json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`)
	must(t, srv.AddTools(
		&mcp.Tool{Name: "ok", Handler: textResult("fine")},
		&mcp.Tool{Name: "fails", Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			return nil, fmt.Errorf("could not use %s", args) // a tool error that repeats its arguments
		}},
		&mcp.Tool{Name: "strict", InputSchema: strict, Handler: textResult("fine")},
		&mcp.Tool{Name: "admin_only", Handler: textResult("fine")},
		&mcp.Tool{Name: "limited", Handler: textResult("fine")},
		&mcp.Tool{Name: "times_out", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			// Some SDKs answer a timeout with -32001 and no data.kind.
			return nil, jsonrpc.NewError(jsonrpc.CodeForbidden, "request timed out", nil)
		}},
		&mcp.Tool{Name: "bomb", Handler: explode},
	))
	must(t, srv.AddResources(&mcp.Resource{URI: "x://doc", Name: "doc",
		Read: func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
			return json.RawMessage(`{"contents":[]}`), nil
		}}))
	must(t, srv.AddPrompts(&mcp.Prompt{Name: "review", Arguments: []mcp.PromptArgument{{Name: "diff"}},
		Get: func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
			return json.RawMessage(`{"messages":[]}`), nil
		}}))
	return srv
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var alice = mcp.Identity{Subject: "alice", Role: "editor", TokenID: "tok_alice"}

// session opens an initialized session bound to id.
func session(t testing.TB, srv *mcp.Server, id mcp.Identity) *mcp.Session {
	t.Helper()
	ss := srv.NewSession(mcp.SessionOptions{ID: "s-" + id.Subject, Identity: id, Version: mcp.LatestVersion})
	t.Cleanup(ss.Close)
	return ss
}

var seq struct {
	sync.Mutex
	n int
}

// call sends one request and returns the engine's answer, parsed.
func call(t testing.TB, ss *mcp.Session, method, params string) *jsonrpc.Message {
	t.Helper()
	seq.Lock()
	seq.n++
	id := jsonrpc.ID(fmt.Sprint(seq.n))
	seq.Unlock()
	var raw json.RawMessage
	if params != "" {
		raw = json.RawMessage(params)
	}
	m, err := jsonrpc.Parse(jsonrpc.AppendRequest(nil, id, method, raw))
	if err != nil {
		t.Fatal(err)
	}
	answer, err := jsonrpc.Parse(ss.Handle(context.Background(), m, nil))
	if err != nil {
		t.Fatalf("%s: answer: %v", method, err)
	}
	return answer
}

// answeredCode is the error code answered, 0 for a result.
func answeredCode(t testing.TB, m *jsonrpc.Message) int64 {
	t.Helper()
	if m.Kind() != jsonrpc.KindError {
		return 0
	}
	e, err := m.ErrorObject()
	if err != nil {
		t.Fatal(err)
	}
	return e.Code
}

func TestOneRecordPerGatedCall(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{})
	var logs testkit.Output
	srv := auditedServer(t, l, slog.New(slog.NewJSONHandler(&logs, nil)))
	ss := session(t, srv, alice)

	tests := []struct {
		rule, method, params string
		kind, name, outcome  string
		code                 int64
	}{
		{"a result is ok", "tools/call", `{"name":"ok","arguments":{"password":"` + secret + `"}}`, "tool", "ok", string(mcp.OutcomeOK), 0},
		{"an isError result is a tool error", "tools/call", `{"name":"fails","arguments":{"q":"` + secret + `"}}`, "tool", "fails", string(mcp.OutcomeToolError), 0},
		{"a role refusal is forbidden", "tools/call", `{"name":"admin_only","arguments":{"q":"` + secret + `"}}`, "tool", "admin_only", string(mcp.OutcomeForbidden), jsonrpc.CodeForbidden},
		{"a rate refusal is rate_limited", "tools/call", `{"name":"limited"}`, "tool", "limited", string(mcp.OutcomeRateLimited), jsonrpc.CodeRateLimited},
		{"arguments against the schema are invalid", "tools/call", `{"name":"strict","arguments":{"env":7,"token":"` + secret + `"}}`, "tool", "strict", string(mcp.OutcomeInvalid), jsonrpc.CodeInvalidParams},
		{"an unknown tool is invalid", "tools/call", `{"name":"nope","arguments":{"q":"` + secret + `"}}`, "tool", "nope", string(mcp.OutcomeInvalid), jsonrpc.CodeInvalidParams},
		{"-32001 without data.kind is an error, not forbidden", "tools/call", `{"name":"times_out"}`, "tool", "times_out", string(mcp.OutcomeError), jsonrpc.CodeForbidden},
		{"a panic is an internal error", "tools/call", `{"name":"bomb","arguments":{"q":"` + secret + `"}}`, "tool", "bomb", string(mcp.OutcomeError), jsonrpc.CodeInternalError},
		{"a resource read is recorded by URI", "resources/read", `{"uri":"x://doc"}`, "resource", "x://doc", string(mcp.OutcomeOK), 0},
		{"an unknown resource is an error with its code", "resources/read", `{"uri":"x://nope"}`, "resource", "x://nope", string(mcp.OutcomeError), jsonrpc.CodeResourceNotFound},
		{"a prompt is recorded by name", "prompts/get", `{"name":"review","arguments":{"diff":"` + secret + `"}}`, "prompt", "review", string(mcp.OutcomeOK), 0},
		{"params without a name record an empty name", "prompts/get", `{"arguments":{"diff":"` + secret + `"}}`, "prompt", "", string(mcp.OutcomeInvalid), jsonrpc.CodeInvalidParams},
	}
	ungated := []struct{ method, params string }{
		{"ping", ""}, {"tools/list", ""}, {"resources/list", ""}, {"resources/templates/list", ""},
		{"prompts/list", ""}, {"logging/setLevel", `{"level":"info"}`}, {"no/such", `{"name":"ok"}`},
	}
	before := time.Now().UTC()
	for i, tt := range tests {
		if got := answeredCode(t, call(t, ss, tt.method, tt.params)); got != tt.code {
			t.Fatalf("%s: answered %d, want %d", tt.rule, got, tt.code)
		}
		u := ungated[i%len(ungated)]
		call(t, ss, u.method, u.params)
	}
	after := time.Now().UTC()
	closeLog(t, l)

	recs := w.records()
	if len(recs) != len(tests) {
		t.Fatalf("%d records for %d gated calls among %d others:\n%+v", len(recs), len(tests), len(tests), recs)
	}
	for i, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			r := recs[i]
			want := store.AuditRecord{Time: r.Time, Subject: "alice", TokenID: "tok_alice", Role: "editor",
				Kind: tt.kind, Name: tt.name, Outcome: tt.outcome, Code: tt.code, Duration: r.Duration}
			if r != want {
				t.Fatalf("record\n%+v\nwant\n%+v", r, want)
			}
			if r.Time.Before(before) || r.Time.After(after) || r.Time.Location() != time.UTC {
				t.Fatalf("time %v is not the arrival, in UTC", r.Time)
			}
			if r.Duration < 0 || r.Duration > after.Sub(before) {
				t.Fatalf("duration %v", r.Duration)
			}
		})
	}
	// The panic still reached the engine's recovery, with the stack of
	// the tool that panicked.
	if out := logs.String(); !strings.Contains(out, "kaboom") || !strings.Contains(out, "audit_test.explode") {
		t.Fatalf("the engine did not log the original panic:\n%s", out)
	}
}

func TestNoArgumentValueInAnyRecord(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{})
	srv := auditedServer(t, l, nil)
	ss := session(t, srv, alice)
	for _, c := range []struct{ method, params string }{
		{"tools/call", `{"name":"ok","arguments":{"password":"` + secret + `"}}`},
		{"tools/call", `{"name":"fails","arguments":{"password":"` + secret + `"}}`},
		{"tools/call", `{"name":"strict","arguments":{"env":{"nested":"` + secret + `"}}}`},
		{"tools/call", `{"name":"admin_only","arguments":{"password":"` + secret + `"}}`},
		{"tools/call", `{"name":"bomb","arguments":{"password":"` + secret + `"}}`},
		{"tools/call", `{"arguments":{"password":"` + secret + `"}}`},
		{"prompts/get", `{"name":"review","arguments":{"diff":"` + secret + `"}}`},
		{"resources/read", `{"uri":"x://doc","_meta":{"token":"` + secret + `"}}`},
	} {
		call(t, ss, c.method, c.params)
	}
	closeLog(t, l)
	recs := w.records()
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	for _, r := range recs {
		if strings.Contains(fmt.Sprintf("%#v", r), secret) {
			t.Fatalf("an argument value reached the audit log: %+v", r)
		}
	}
}

func TestBackendIsRecorded(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{})
	srv := auditedServer(t, l, nil)
	must(t, srv.AddTools(&mcp.Tool{Name: "ok", Owner: "github", Handler: textResult("fine")}))
	ss := session(t, srv, alice)
	call(t, ss, "tools/call", `{"name":"ok"}`)
	call(t, ss, "prompts/get", `{"name":"review"}`)
	closeLog(t, l)
	recs := w.records()
	if len(recs) != 2 || recs[0].Backend != "github" || recs[1].Backend != "" {
		t.Fatalf("records %+v", recs)
	}
}

func TestLongNamesAreCut(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{})
	ss := session(t, auditedServer(t, l, nil), alice)
	long := strings.Repeat("é", 1000) // 2000 bytes
	call(t, ss, "tools/call", `{"name":"`+long+`"}`)
	closeLog(t, l)
	name := w.records()[0].Name
	if len(name) > 512 || !strings.HasPrefix(long, name) || len(name) < 500 {
		t.Fatalf("recorded a name of %d bytes", len(name))
	}
}

func TestOneRecordPerCallUnderConcurrentLoad(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{BatchSize: 32, Buffer: 64})
	srv := auditedServer(t, l, nil)
	const callers, each = 64, 40
	var wg sync.WaitGroup
	for c := range callers {
		ss := session(t, srv, mcp.Identity{Subject: fmt.Sprint("user", c), Role: "viewer"})
		wg.Go(func() {
			for i := range each {
				tool := []string{"ok", "admin_only", "limited", "fails"}[i%4]
				call(t, ss, "tools/call", `{"name":"`+tool+`"}`)
				call(t, ss, "tools/list", "")
			}
		})
	}
	wg.Wait()
	closeLog(t, l)
	perCaller := map[string]int{}
	perOutcome := map[string]int{}
	for _, r := range w.records() {
		perCaller[r.Subject]++
		perOutcome[r.Outcome]++
	}
	for c := range callers {
		if n := perCaller[fmt.Sprint("user", c)]; n != each {
			t.Fatalf("user%d: %d records, want %d", c, n, each)
		}
	}
	want := map[string]int{string(mcp.OutcomeOK): callers * each / 4, string(mcp.OutcomeForbidden): callers * each / 4,
		string(mcp.OutcomeRateLimited): callers * each / 4, string(mcp.OutcomeToolError): callers * each / 4}
	if !reflect.DeepEqual(perOutcome, want) {
		t.Fatalf("outcomes %v, want %v", perOutcome, want)
	}
}
