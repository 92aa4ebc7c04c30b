// gate_test.go pins the gate hook (spec §6): Admit exactly once per
// tools/call, resources/read and prompts/get, after the entry is found and
// before anything about the arguments is said; never for the ungated
// methods; and lists that show only what Visible allows.

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// spyGate records every decision asked of it. It refuses entries whose
// MinRole is in refuse, and hides entries whose MinRole is in hide.
type spyGate struct {
	refuse, hide map[string]bool

	mu       sync.Mutex
	admitted []mcp.Entry
	callers  []string // subject of the identity in ctx, for every decision
}

func (g *spyGate) Visible(ctx context.Context, e mcp.Entry) bool {
	g.sawCaller(ctx)
	return !g.hide[e.MinRole]
}

func (g *spyGate) sawCaller(ctx context.Context) {
	id, ok := mcp.IdentityFrom(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !ok {
		id.Subject = "<none>"
	}
	g.callers = append(g.callers, id.Subject)
}

func (g *spyGate) Admit(ctx context.Context, e mcp.Entry) error {
	if e.Kind == mcp.KindSession {
		return nil // sessions: TestInitializeAsksTheGateForASession
	}
	g.sawCaller(ctx)
	g.mu.Lock()
	g.admitted = append(g.admitted, e)
	g.mu.Unlock()
	if g.refuse[e.MinRole] {
		return jsonrpc.NewError(jsonrpc.CodeForbidden, "forbidden: requires role "+e.MinRole,
			map[string]string{"kind": "forbidden", "requiredRole": e.MinRole})
	}
	return nil
}

func (g *spyGate) calls() []mcp.Entry {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.admitted)
}

// gatedServer registers one entry of each kind with MinRole role, each of
// whose handlers records that it ran.
func gatedServer(t *testing.T, gate *spyGate, role string, ran *[]string) *mcp.Server {
	t.Helper()
	srv := newServer(t, mcp.Options{Gate: gate})
	mark := func(what string) {
		gate.mu.Lock()
		*ran = append(*ran, what)
		gate.mu.Unlock()
	}
	mustAdd(t, srv.AddTools(&mcp.Tool{
		Name: "deploy", MinRole: role,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`),
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			mark("tool")
			return json.RawMessage(`{"content":[]}`), nil
		},
	}))
	read := func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
		mark("resource")
		return json.RawMessage(`{"contents":[]}`), nil
	}
	mustAdd(t, srv.AddResources(&mcp.Resource{URI: "x://secret", MinRole: role, Read: read}))
	mustAdd(t, srv.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: "x://rows/{id}", MinRole: role, Read: read}))
	mustAdd(t, srv.AddPrompts(&mcp.Prompt{
		Name: "review", MinRole: role,
		Arguments: []mcp.PromptArgument{{Name: "diff", Required: true}},
		Get: func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
			mark("prompt")
			return json.RawMessage(`{"messages":[]}`), nil
		},
	}))
	return srv
}

func TestGateAdmitsOnceWithTheEntry(t *testing.T) {
	tests := []struct {
		name, method, params string
		want                 mcp.Entry
		ran                  string
	}{
		{"tools/call", "tools/call", `{"name":"deploy","arguments":{"env":"prod"}}`, mcp.Entry{Kind: mcp.KindTool, Name: "deploy", MinRole: "editor"}, "tool"},
		{"resources/read of a concrete resource", "resources/read", `{"uri":"x://secret"}`, mcp.Entry{Kind: mcp.KindResource, Name: "x://secret", MinRole: "editor"}, "resource"},
		{"resources/read through a template names the template", "resources/read", `{"uri":"x://rows/7"}`, mcp.Entry{Kind: mcp.KindResource, Name: "x://rows/{id}", MinRole: "editor"}, "resource"},
		{"prompts/get", "prompts/get", `{"name":"review","arguments":{"diff":"-a +b"}}`, mcp.Entry{Kind: mcp.KindPrompt, Name: "review", MinRole: "editor"}, "prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := &spyGate{}
			var ran []string
			ss, _ := readySession(t, gatedServer(t, gate, "editor", &ran))
			result(t, call(t, ss, tt.method, tt.params))
			if got := gate.calls(); len(got) != 1 || got[0] != tt.want {
				t.Fatalf("Admit calls %+v, want exactly %+v", got, tt.want)
			}
			if !slices.Equal(ran, []string{tt.ran}) {
				t.Fatalf("handlers run %v", ran)
			}
		})
	}
}

func TestGateRunsBeforeArgumentsAndHandler(t *testing.T) {
	tests := []struct {
		name, method, params string
	}{
		{"tools/call with valid arguments", "tools/call", `{"name":"deploy","arguments":{"env":"prod"}}`},
		{"tools/call with schema-invalid arguments", "tools/call", `{"name":"deploy","arguments":{"env":5}}`},
		{"tools/call with arguments that are not an object", "tools/call", `{"name":"deploy","arguments":[1]}`},
		{"resources/read", "resources/read", `{"uri":"x://secret"}`},
		{"resources/read through a template", "resources/read", `{"uri":"x://rows/7"}`},
		{"prompts/get with its arguments", "prompts/get", `{"name":"review","arguments":{"diff":"x"}}`},
		{"prompts/get missing a required argument", "prompts/get", `{"name":"review"}`},
		{"prompts/get with arguments that are not strings", "prompts/get", `{"name":"review","arguments":{"diff":1}}`},
	}
	for _, tt := range tests {
		t.Run("a refusal wins over "+tt.name, func(t *testing.T) {
			gate := &spyGate{refuse: map[string]bool{"admin": true}}
			var ran []string
			ss, _ := readySession(t, gatedServer(t, gate, "admin", &ran))
			e := rpcError(t, call(t, ss, tt.method, tt.params), jsonrpc.CodeForbidden)
			if data := decode[map[string]string](t, e.Data); data["kind"] != "forbidden" {
				t.Fatalf("the gate's error was not answered as it is: %+v", e)
			}
			if len(gate.calls()) != 1 {
				t.Fatalf("Admit called %d times", len(gate.calls()))
			}
			if len(ran) != 0 {
				t.Fatalf("handlers ran after a refusal: %v", ran)
			}
		})
	}
}

func TestUnknownEntriesNeverReachTheGate(t *testing.T) {
	tests := []struct {
		name, method, params string
		code                 int64
	}{
		{"unknown tool", "tools/call", `{"name":"nope","arguments":{}}`, jsonrpc.CodeInvalidParams},
		{"tools/call without a name", "tools/call", `{}`, jsonrpc.CodeInvalidParams},
		{"unknown resource", "resources/read", `{"uri":"x://nope"}`, jsonrpc.CodeResourceNotFound},
		{"resources/read without a uri", "resources/read", `{}`, jsonrpc.CodeInvalidParams},
		{"unknown prompt", "prompts/get", `{"name":"nope"}`, jsonrpc.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := &spyGate{refuse: map[string]bool{"": true, "admin": true}}
			var ran []string
			ss, _ := readySession(t, gatedServer(t, gate, "admin", &ran))
			rpcError(t, call(t, ss, tt.method, tt.params), tt.code)
			if got := gate.calls(); len(got) != 0 {
				t.Fatalf("Admit called with %+v", got)
			}
		})
	}
}

func TestUngatedMethodsNeverCallAdmit(t *testing.T) {
	gate := &spyGate{refuse: map[string]bool{"": true, "editor": true}}
	var ran []string
	srv := gatedServer(t, gate, "editor", &ran)
	ss := newSession(t, srv, mcp.SessionOptions{ID: "s"})
	result(t, call(t, ss, "ping", ""))
	initialize(t, ss, mcp.LatestVersion)
	for _, rq := range [][2]string{
		{"ping", ""},
		{"tools/list", ""},
		{"resources/list", ""},
		{"resources/templates/list", ""},
		{"prompts/list", ""},
		{"logging/setLevel", `{"level":"info"}`},
		{"resources/unsubscribe", `{"uri":"x://secret"}`},
	} {
		result(t, call(t, ss, rq[0], rq[1]))
	}
	notify(t, ss, "notifications/initialized", "")
	if got := gate.calls(); len(got) != 0 {
		t.Fatalf("Admit called with %+v", got)
	}
}

func TestListsShowOnlyVisibleEntries(t *testing.T) {
	for _, c := range catalogues {
		t.Run(c.name, func(t *testing.T) {
			gate := &spyGate{hide: map[string]bool{"admin": true}}
			srv := newServer(t, mcp.Options{Gate: gate, PageSize: 3})
			// Interleave hidden and visible entries, hidden ones in runs
			// longer than a page, so that pages must skip over them.
			keys := randomKeys(c, 20)
			var visible []string
			for i, k := range keys {
				role := ""
				if i%5 != 0 && i < 10 || i >= 15 {
					role = "admin"
				}
				mustAdd(t, c.add(srv, role, k))
				if role == "" {
					visible = append(visible, k)
				}
			}
			ss, _ := readySession(t, srv)
			got, pages := listAll(t, ss, c)
			if !slices.Equal(got, visible) {
				t.Fatalf("listed %v, want the visible %v", got, visible)
			}
			if want := (len(visible) + 2) / 3; pages != want {
				t.Fatalf("%d pages for %d visible entries, want %d", pages, len(visible), want)
			}
		})
	}
	t.Run("nothing visible is one empty page", func(t *testing.T) {
		gate := &spyGate{hide: map[string]bool{"admin": true}}
		srv := newServer(t, mcp.Options{Gate: gate, PageSize: 3})
		mustAdd(t, catalogues[0].add(srv, "admin", randomKeys(catalogues[0], 7)...))
		ss, _ := readySession(t, srv)
		p := listPage(t, ss, catalogues[0], "")
		if len(p.keys) != 0 || p.nextCursor != nil {
			t.Fatalf("page %+v", p)
		}
	})
}

func TestGateSeesTheCaller(t *testing.T) {
	alice := mcp.Identity{Subject: "alice", Role: "viewer", TokenID: "tok-1"}
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"the session's identity when the transport put none in ctx", context.Background(), "alice"},
		{"the transport's identity when it put one in ctx", mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "bob"}), "bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := &spyGate{}
			var ran []string
			srv := gatedServer(t, gate, "", &ran)
			ss := newSession(t, srv, mcp.SessionOptions{ID: "s", Identity: alice, Version: mcp.LatestVersion})
			for _, rq := range [][2]string{
				{"tools/list", ""},
				{"tools/call", `{"name":"deploy","arguments":{"env":"prod"}}`},
				{"resources/read", `{"uri":"x://secret"}`},
				{"prompts/get", `{"name":"review","arguments":{"diff":"x"}}`},
			} {
				answer := ss.Handle(tt.ctx, request(t, nextID(), rq[0], rq[1]), nil)
				result(t, mustParse(t, answer))
			}
			gate.mu.Lock()
			defer gate.mu.Unlock()
			if len(gate.callers) != 4 {
				t.Fatalf("gate consulted %d times, want 4", len(gate.callers))
			}
			for _, c := range gate.callers {
				if c != tt.want {
					t.Fatalf("gate saw callers %v, want %s", gate.callers, tt.want)
				}
			}
		})
	}
}

// completion/complete keeps to the lists' visibility: a ref to a prompt or
// template the caller may not see is answered as unknown, and the
// completion handler never runs for it.
func TestCompletionHidesWhatTheListsHide(t *testing.T) {
	var completed int
	s := mcp.NewServer(mcp.Options{
		Gate: hideGate{hidden: map[string]bool{"secret_prompt": true, "test://secret/{id}": true}},
		Complete: func(context.Context, *mcp.Request) (json.RawMessage, error) {
			completed++
			return json.RawMessage(`{"completion":{"values":["x"]}}`), nil
		},
	})
	noop := func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
		return json.RawMessage(`{"messages":[]}`), nil
	}
	read := func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
		return json.RawMessage(`{"contents":[]}`), nil
	}
	if err := errors.Join(
		s.AddPrompts(&mcp.Prompt{Name: "secret_prompt", Get: noop}, &mcp.Prompt{Name: "open_prompt", Get: noop}),
		s.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: "test://secret/{id}", Name: "s", Read: read}),
	); err != nil {
		t.Fatal(err)
	}
	sess := s.NewSession(mcp.SessionOptions{Version: mcp.LatestVersion})
	defer sess.Close()
	for _, tc := range []struct {
		ref     string
		allowed bool
	}{
		{`{"type":"ref/prompt","name":"open_prompt"}`, true},
		{`{"type":"ref/prompt","name":"secret_prompt"}`, false},
		{`{"type":"ref/resource","uri":"test://secret/{id}"}`, false},
		{`{"type":"ref/prompt","name":"not_registered"}`, true}, // left to the handler
	} {
		before := completed
		out := sess.Handle(context.Background(), mustParse(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":`+tc.ref+`,"argument":{"name":"a","value":""}}}`)), nil)
		m := mustParse(t, out)
		if tc.allowed != (m.Error == nil) || tc.allowed != (completed == before+1) {
			t.Errorf("ref %s: answer %s, handler ran %d times", tc.ref, out, completed-before)
		}
	}
}

// hideGate hides the named entries and admits everything else.
type hideGate struct{ hidden map[string]bool }

func (g hideGate) Visible(_ context.Context, e mcp.Entry) bool { return !g.hidden[e.Name] }
func (g hideGate) Admit(context.Context, mcp.Entry) error      { return nil }

// sessionGate refuses every session and admits everything else.
type sessionGate struct{ asked []mcp.Entry }

func (g *sessionGate) Visible(context.Context, mcp.Entry) bool { return true }
func (g *sessionGate) Admit(_ context.Context, e mcp.Entry) error {
	g.asked = append(g.asked, e)
	if e.Kind == mcp.KindSession {
		return jsonrpc.NewError(jsonrpc.CodeRateLimited, "rate limited: retry in 1 s", map[string]any{"kind": "rate_limited", "retryAfterSeconds": 1})
	}
	return nil
}

func TestInitializeAsksTheGateForASession(t *testing.T) {
	gate := &sessionGate{}
	srv := newServer(t, mcp.Options{Gate: gate})
	ss := newSession(t, srv, mcp.SessionOptions{ID: "s"})
	rpcError(t, call(t, ss, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`), jsonrpc.CodeRateLimited)
	if ss.Initialized() {
		t.Fatal("a refused initialize initialized the session")
	}
	if want := (mcp.Entry{Kind: mcp.KindSession, Name: "initialize"}); len(gate.asked) != 1 || gate.asked[0] != want {
		t.Fatalf("gate asked %+v, want %+v", gate.asked, want)
	}
}

// resources/subscribe answers exactly as resources/read would: an unknown
// URI is not found, one the caller's role does not reach is forbidden, and
// only a readable one is subscribed to.
func TestSubscribeAnswersAsReadWould(t *testing.T) {
	for _, uri := range []string{"x://secret", "x://rows/7", "x://nope"} {
		gate := &spyGate{refuse: map[string]bool{"admin": true}}
		var ran []string
		ss, _ := readySession(t, gatedServer(t, gate, "admin", &ran))
		params := `{"uri":"` + uri + `"}`
		read := call(t, ss, "resources/read", params)
		sub := call(t, ss, "resources/subscribe", params)
		if string(read.Error) != string(sub.Error) || read.Error == nil {
			t.Errorf("%s: subscribe answered %s, read %s", uri, sub.Error, read.Error)
		}
	}
	gate := &spyGate{}
	var ran []string
	ss, _ := readySession(t, gatedServer(t, gate, "editor", &ran))
	result(t, call(t, ss, "resources/subscribe", `{"uri":"x://secret"}`))
	if got := gate.calls(); len(got) != 1 || got[0].Name != "x://secret" {
		t.Errorf("subscribe asked the gate about %+v", got)
	}
	if len(ran) != 0 {
		t.Errorf("subscribe read the resource: %v", ran)
	}
}

// A handler that aborts its own request ends its context with the cause,
// and its answer is still sent (unlike a client's cancellation).
func TestAbortEndsTheRequestsContextAndKeepsItsAnswer(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	cause := errors.New("the backend went quiet")
	srv.Handle("x/abort", mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
		r.Abort(cause)
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), cause) {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "cause %v", context.Cause(ctx))
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "gave up: %v", cause)
	}))
	ss, _ := readySession(t, srv)
	e := rpcError(t, call(t, ss, "x/abort", ""), jsonrpc.CodeInternalError)
	if e.Message != "gave up: the backend went quiet" {
		t.Errorf("answer %q", e.Message)
	}
}
