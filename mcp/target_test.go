// target_test.go pins what the engine resolves about a request before its
// chain runs (Request.Target) and what it tells its observers: the entry,
// its owner and the outcome, once per request, in order, a panic included.

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// watch records, per request, the Target seen at Begin, the End, and the
// order in which observers were told.
type watch struct {
	name string
	mu   *sync.Mutex
	log  *[]string
	seen map[string]observed
}

type observed struct {
	target  *mcp.Target
	inChain bool // the ctx Begin returned is the one the chain ran with
	end     mcp.End
}

type watchKey struct{ name string }

func (w *watch) Begin(ctx context.Context, r *mcp.Request) context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	*w.log = append(*w.log, "begin "+w.name)
	var t *mcp.Target
	if r.Target() != nil {
		c := *r.Target()
		t = &c
	}
	w.seen[string(r.Params)] = observed{target: t}
	return context.WithValue(ctx, watchKey{w.name}, true)
}

func (w *watch) End(ctx context.Context, r *mcp.Request, e mcp.End) {
	w.mu.Lock()
	defer w.mu.Unlock()
	*w.log = append(*w.log, "end "+w.name)
	o := w.seen[string(r.Params)]
	o.end = e
	o.inChain = ctx.Value(watchKey{w.name}) != nil
	w.seen[string(r.Params)] = o
}

func TestTheEngineResolvesTheTargetOnceBeforeTheChain(t *testing.T) {
	var mu sync.Mutex
	var order []string
	a := &watch{name: "a", mu: &mu, log: &order, seen: map[string]observed{}}
	b := &watch{name: "b", mu: &mu, log: &order, seen: map[string]observed{}}
	s := newServer(t, mcp.Options{Observers: []mcp.Observer{a, b}, Gate: refuse{"secret"},
		Unknown: func(kind mcp.EntryKind, name string) (mcp.Entry, error) {
			if name == "down" {
				return mcp.Entry{Kind: kind, Name: name, Owner: "gone"}, jsonrpc.NewError(jsonrpc.CodeInternalError, "backend gone is unavailable", nil)
			}
			return mcp.Entry{}, nil
		}})
	ok := func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[]}`), nil
	}
	must(t, s.AddTools(&mcp.Tool{Name: "echo", Owner: "b1", Handler: ok}, &mcp.Tool{Name: "secret", Handler: ok},
		&mcp.Tool{Name: "bomb", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) { panic("kaboom") }}))
	read := func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
		return json.RawMessage(`{"contents":[]}`), nil
	}
	must(t, s.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: "mem://items/{id}", Name: "item", Owner: "b2", Read: read}))
	ss, _ := readySession(t, s)

	for _, c := range []struct {
		rule, method, params string
		want                 *mcp.Target
		outcome              mcp.Outcome
		code                 int64
	}{
		{"a tool is found with its owner", "tools/call", `{"name":"echo","arguments":{"name":"x"}}`,
			&mcp.Target{Kind: mcp.KindTool, Name: "echo", Found: true, Call: true, Entry: mcp.Entry{Kind: mcp.KindTool, Name: "echo", Owner: "b1"}}, mcp.OutcomeOK, 0},
		{"a URI is found as the template's pattern", "resources/read", `{"uri":"mem://items/7","name":"x"}`,
			&mcp.Target{Kind: mcp.KindResource, Name: "mem://items/7", Found: true, Call: true, Entry: mcp.Entry{Kind: mcp.KindResource, Name: "mem://items/{id}", Owner: "b2"}}, mcp.OutcomeOK, 0},
		{"subscribe resolves too, but is no call", "resources/subscribe", `{"uri":"mem://items/8"}`,
			&mcp.Target{Kind: mcp.KindResource, Name: "mem://items/8", Found: true, Entry: mcp.Entry{Kind: mcp.KindResource, Name: "mem://items/{id}", Owner: "b2"}}, mcp.OutcomeOK, 0},
		{"an unknown name is not found", "tools/call", `{"name":"nope"}`,
			&mcp.Target{Kind: mcp.KindTool, Name: "nope", Call: true}, mcp.OutcomeInvalid, jsonrpc.CodeInvalidParams},
		{"a remembered entry keeps its owner", "tools/call", `{"name":"down"}`,
			&mcp.Target{Kind: mcp.KindTool, Name: "down", Call: true, Entry: mcp.Entry{Kind: mcp.KindTool, Name: "down", Owner: "gone"}}, mcp.OutcomeError, jsonrpc.CodeInternalError},
		{"a name that is not a string is no name", "prompts/get", `{"name":7}`,
			&mcp.Target{Kind: mcp.KindPrompt, Call: true}, mcp.OutcomeInvalid, jsonrpc.CodeInvalidParams},
		{"keys that fold together are refused before anything is looked up", "tools/call", `{"name":"echo","NAME":"secret"}`,
			&mcp.Target{Kind: mcp.KindTool, Name: "echo", Call: true}, mcp.OutcomeInvalid, jsonrpc.CodeInvalidParams},
		{"the gate refuses what was found", "tools/call", `{"name":"secret"}`,
			&mcp.Target{Kind: mcp.KindTool, Name: "secret", Found: true, Call: true, Entry: mcp.Entry{Kind: mcp.KindTool, Name: "secret"}}, mcp.OutcomeForbidden, jsonrpc.CodeForbidden},
		{"a panic ends as the -32603 answered", "tools/call", `{"name":"bomb"}`,
			&mcp.Target{Kind: mcp.KindTool, Name: "bomb", Found: true, Call: true, Entry: mcp.Entry{Kind: mcp.KindTool, Name: "bomb"}}, mcp.OutcomeError, jsonrpc.CodeInternalError},
		{"a method naming no entry has no target", "tools/list", `{"cursor":null}`, nil, mcp.OutcomeOK, 0},
		{"an unknown method ends -32601", "no/such", `{"name":"echo"}`, nil, mcp.OutcomeError, jsonrpc.CodeMethodNotFound},
	} {
		t.Run(c.rule, func(t *testing.T) {
			mu.Lock()
			order = order[:0]
			mu.Unlock()
			call(t, ss, c.method, c.params)
			mu.Lock()
			defer mu.Unlock()
			if got := order; len(got) != 4 || got[0] != "begin a" || got[1] != "begin b" || got[2] != "end b" || got[3] != "end a" {
				t.Errorf("observers told %v, want begin a, begin b, end b, end a", got)
			}
			for _, w := range []*watch{a, b} {
				o := w.seen[c.params]
				switch {
				case c.want == nil && o.target != nil, c.want != nil && (o.target == nil || !sameTarget(*o.target, *c.want)):
					t.Errorf("%s saw target %+v, want %+v", w.name, o.target, c.want)
				}
				if o.end.Outcome != c.outcome || o.end.Code != c.code || o.end.Start.IsZero() || o.end.Duration < 0 {
					t.Errorf("%s saw end %+v, want %s %d", w.name, o.end, c.outcome, c.code)
				}
				if !o.inChain {
					t.Errorf("%s's End did not get the context its Begin returned", w.name)
				}
			}
		})
	}
}

// refuse is a gate that refuses the named entry.
type refuse struct{ name string }

func (refuse) Visible(context.Context, mcp.Entry) bool { return true }
func (g refuse) Admit(_ context.Context, e mcp.Entry) error {
	if e.Name == g.name {
		return jsonrpc.NewError(jsonrpc.CodeForbidden, "forbidden", map[string]string{"kind": "forbidden"})
	}
	return nil
}

// A middleware added with Use runs after the gate has been asked only if
// the gate admitted the call: the engine puts the gate innermost, but a
// refused call never reaches the method, and no middleware can serve a
// call the gate refused by running the method itself.
func TestTheGateAdmitsBeforeTheMethodWhateverTheMiddleware(t *testing.T) {
	s := newServer(t, mcp.Options{Gate: refuse{"secret"}})
	ran := false
	must(t, s.AddTools(&mcp.Tool{Name: "secret", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		ran = true
		return json.RawMessage(`{"content":[]}`), nil
	}}))
	var sawTarget *mcp.Target
	s.Use(func(next mcp.Handler) mcp.Handler {
		return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
			sawTarget = r.Target()
			return next.ServeMCP(ctx, r)
		})
	})
	ss, _ := readySession(t, s)
	m := call(t, ss, "tools/call", `{"name":"secret"}`)
	var je *jsonrpc.Error
	if e, err := m.ErrorObject(); err != nil || !errors.As(error(e), &je) || je.Code != jsonrpc.CodeForbidden || ran {
		t.Fatalf("answer %s %s, ran %v; want -32001 and the tool not run", m.Result, m.Error, ran)
	}
	if sawTarget == nil || !sawTarget.Found || sawTarget.Entry.Name != "secret" {
		t.Errorf("the middleware saw target %+v, want the resolved entry", sawTarget)
	}
}

// sameTarget compares what a Target tells its readers.
func sameTarget(a, b mcp.Target) bool {
	return a.Kind == b.Kind && a.Name == b.Name && a.Found == b.Found && a.Entry == b.Entry && a.Call == b.Call
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
