package intercept_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/intercept"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// engine is a server with one tool, echo, answering its arguments as
// text, behind chain (inside the gate, as the gateway puts it).
func engine(t *testing.T, chain *intercept.Chain) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(mcp.Options{})
	if err := s.AddTools(&mcp.Tool{Name: "echo", Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(args))}})
	}}); err != nil {
		t.Fatal(err)
	}
	s.UseAdmitted(chain.Middleware)
	return s
}

// call is one tools/call of echo with args, as alice.
func call(t *testing.T, s *mcp.Server, args string) (string, error) {
	t.Helper()
	ctx := mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "alice", Role: "editor", TokenID: "tok_a"})
	res, err := s.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":`+args+`}`))
	if err != nil {
		return "", err
	}
	var r mcp.CallToolResult
	_ = json.Unmarshal(res, &r)
	if len(r.Content) == 0 {
		return string(res), nil
	}
	return r.Content[0].Text, nil
}

// hookServer answers each document with answer(doc); seen keeps them.
type hookServer struct {
	mu   sync.Mutex
	seen []map[string]any
	url  string
}

func newHook(t *testing.T, answer func(doc map[string]any) (int, string)) *hookServer {
	t.Helper()
	h := &hookServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var doc map[string]any
		_ = json.NewDecoder(r.Body).Decode(&doc)
		h.mu.Lock()
		h.seen = append(h.seen, doc)
		h.mu.Unlock()
		status, body := answer(doc)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// newHookHandler is a hook server of its own handler.
func newHookHandler(t *testing.T, h http.HandlerFunc) *hookServer {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &hookServer{url: srv.URL}
}

func chain(t *testing.T, specs ...intercept.HookSpec) (*intercept.Chain, map[string]int) {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	c, err := intercept.New(specs, intercept.Options{Count: func(name, outcome string) {
		mu.Lock()
		counts[name+" "+outcome]++
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c, counts
}

func forbidden(t *testing.T, err error, interceptor string) string {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeForbidden || !strings.Contains(string(je.Data), `"interceptor":"`+interceptor+`"`) {
		t.Fatalf("%v, want -32001 by interceptor %s", err, interceptor)
	}
	return je.Message
}

// A validating hook sees the principal, the entry and the params before
// the backend, and the result after it; it allows or denies.
func TestAValidatingHookAllowsOrDenies(t *testing.T) {
	h := newHook(t, func(doc map[string]any) (int, string) {
		if strings.Contains(string(mustJSON(doc["params"])), "secret") || strings.Contains(string(mustJSON(doc["result"])), "forbidden-word") {
			return 200, `{"decision":"deny","message":"No secrets here."}`
		}
		return 200, `{"decision":"allow"}`
	})
	c, counts := chain(t, intercept.HookSpec{Name: "dlp", URL: h.url, Request: true, Response: true})
	s := engine(t, c)
	if got, err := call(t, s, `{"q":"hello"}`); err != nil || got != `{"q":"hello"}` {
		t.Fatalf("an allowed call: %q %v", got, err)
	}
	_, err := call(t, s, `{"q":"a secret"}`)
	if msg := forbidden(t, err, "dlp"); msg != "No secrets here." {
		t.Errorf("message %q", msg)
	}
	_, err = call(t, s, `{"q":"forbidden-word"}`) // passes the request side, denied on the answer
	forbidden(t, err, "dlp")
	h.mu.Lock()
	first := h.seen[0]
	h.mu.Unlock()
	p, _ := first["principal"].(map[string]any)
	if first["phase"] != "request" || first["entry"] != "echo" || first["method"] != "tools/call" || p["subject"] != "alice" || p["role"] != "editor" {
		t.Errorf("the first document: %v", first)
	}
	if counts["dlp deny"] != 2 || counts["dlp allow"] != 3 {
		t.Errorf("counted %v", counts)
	}
}

// A mutating hook gives the arguments the backend gets, and the result
// the caller gets; a result that is not a result's shape fails the hook.
func TestAMutatingHookReplacesArgumentsAndResults(t *testing.T) {
	h := newHook(t, func(doc map[string]any) (int, string) {
		if doc["phase"] == "request" {
			return 200, `{"decision":"allow","arguments":{"q":"rewritten"}}`
		}
		if strings.Contains(string(mustJSON(doc["result"])), "badshape") {
			return 200, `{"decision":"allow","result":{"content":"not an array"}}`
		}
		return 200, `{"decision":"allow","result":{"content":[{"type":"text","text":"replaced"}]}}`
	})
	c, _ := chain(t, intercept.HookSpec{Name: "m", URL: h.url, Request: true, Response: true, Mutate: true})
	s := engine(t, c)
	if got, err := call(t, s, `{"q":"original"}`); err != nil || got != "replaced" {
		t.Fatalf("mutated: %q %v", got, err)
	}
	h.mu.Lock()
	resp := h.seen[1]
	h.mu.Unlock()
	if !strings.Contains(string(mustJSON(resp["result"])), "rewritten") {
		t.Errorf("the backend did not get the replaced arguments: %v", resp["result"])
	}
	c2, _ := chain(t, intercept.HookSpec{Name: "m", URL: newHook(t, func(map[string]any) (int, string) {
		return 200, `{"decision":"allow","result":{"content":"not an array"}}`
	}).url, Response: true, Mutate: true})
	_, err := call(t, engine(t, c2), `{}`)
	forbidden(t, err, "m")
}

// A hook that times out, cannot be reached or answers nonsense allows the
// call when it fails open, and denies it when it fails closed.
func TestAFailingHookFollowsItsFailMode(t *testing.T) {
	slow := newHookHandler(t, func(_ http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body); <-r.Context().Done() }) // answers once the chain gave up
	nonsense := newHook(t, func(map[string]any) (int, string) { return 200, `{"verdict":"yes"}` })
	broken := newHook(t, func(map[string]any) (int, string) { return 500, `oops` })
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()
	for _, c := range []struct{ name, url string }{{"slow", slow.url}, {"nonsense", nonsense.url}, {"broken", broken.url}, {"gone", goneURL}} {
		t.Run(c.name, func(t *testing.T) {
			open, counts := chain(t, intercept.HookSpec{Name: c.name, URL: c.url, Request: true, Timeout: 50 * time.Millisecond, FailOpen: true})
			if _, err := call(t, engine(t, open), `{}`); err != nil || counts[c.name+" error_open"] != 1 {
				t.Errorf("fail open: %v, counted %v", err, counts)
			}
			closed, counts := chain(t, intercept.HookSpec{Name: c.name, URL: c.url, Request: true, Timeout: 50 * time.Millisecond})
			_, err := call(t, engine(t, closed), `{}`)
			if msg := forbidden(t, err, c.name); !strings.Contains(msg, "fails closed") || counts[c.name+" error_closed"] != 1 {
				t.Errorf("fail closed: %q, counted %v", msg, counts)
			}
		})
	}
}

// Hooks run in order and a denial ends the chain: the ones after it are
// not asked, nor is the backend; a hook whose match does not hold is not
// asked either.
func TestHooksRunInOrderAndADenialEndsTheChain(t *testing.T) {
	var order []string
	var mu sync.Mutex
	hookNamed := func(name, decision string) string {
		return newHook(t, func(map[string]any) (int, string) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return 200, `{"decision":"` + decision + `"}`
		}).url
	}
	c, _ := chain(t,
		intercept.HookSpec{Name: "first", URL: hookNamed("first", "allow"), Request: true},
		intercept.HookSpec{Name: "skipped", URL: hookNamed("skipped", "deny"), Request: true, Match: `request.entry == "other"`},
		intercept.HookSpec{Name: "second", URL: hookNamed("second", "deny"), Request: true},
		intercept.HookSpec{Name: "third", URL: hookNamed("third", "allow"), Request: true})
	_, err := call(t, engine(t, c), `{}`)
	forbidden(t, err, "second")
	if strings.Join(order, ",") != "first,second" {
		t.Errorf("asked %v", order)
	}
	if _, err := intercept.New([]intercept.HookSpec{{Name: "bad", URL: "http://x", Match: "request.entry =="}}, intercept.Options{}); err == nil ||
		!strings.Contains(err.Error(), "interceptors[0] (bad).match") {
		t.Errorf("a match that does not compile: %v", err)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// FuzzHookAnswer: whatever a hook answers, the decoder says allow or deny
// or refuses it; what it takes as arguments or a result is a JSON object.
func FuzzHookAnswer(f *testing.F) {
	for _, s := range []string{`{"decision":"allow"}`, `{"decision":"deny","message":"no"}`, `{"decision":"allow","arguments":{"a":1}}`,
		`{"decision":"allow","result":{"content":[]}}`, `{"decision":"maybe"}`, `[]`, `{"decision":"allow","arguments":[1]}`, `{"decision":"allow","result":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		decision, args, result, err := intercept.DecodeAnswerForTest(raw)
		if err != nil {
			return
		}
		if decision != "allow" && decision != "deny" {
			t.Fatalf("%q decoded to decision %q", raw, decision)
		}
		for _, v := range []json.RawMessage{args, result} {
			if len(v) > 0 && (v[0] != '{' || !json.Valid(v)) {
				t.Fatalf("%q gave %q, not an object", raw, v)
			}
		}
	})
}

// A hook decodes what it is sent as its own language does. One in Go
// (encoding/json, keys matched without case, the last one winning) read
// {"text":"the secret","TEXT":"fine"} as fine and allowed it; a backend
// or client in JavaScript acts on the secret. Params or an answer that
// readers could read apart are refused, whatever the hook's fail mode,
// and the backend never sees such params.
func TestAHookIsNotAskedAboutWhatReadersCouldReadApart(t *testing.T) {
	h := newHookHandler(t, func(w http.ResponseWriter, r *http.Request) {
		var doc struct {
			Phase  string
			Params struct{ Arguments struct{ Text string } }
			Result struct{ Content []struct{ Text string } }
		}
		_ = json.NewDecoder(r.Body).Decode(&doc)
		text := doc.Params.Arguments.Text
		if len(doc.Result.Content) > 0 {
			text = doc.Result.Content[0].Text
		}
		if strings.Contains(text, "secret") {
			_, _ = w.Write([]byte(`{"decision":"deny","message":"No secrets here."}`))
			return
		}
		_, _ = w.Write([]byte(`{"decision":"allow"}`))
	})
	c, counts := chain(t, intercept.HookSpec{Name: "dlp", URL: h.url, Request: true, Response: true, FailOpen: true})
	s := mcp.NewServer(mcp.Options{})
	var ran sync.Map
	tool := func(name, answer string) *mcp.Tool {
		return &mcp.Tool{Name: name, Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			ran.Store(name, string(args))
			return json.RawMessage(answer), nil
		}}
	}
	if err := s.AddTools(tool("echo", `{"content":[{"type":"text","text":"fine"}]}`),
		tool("leak", `{"content":[{"type":"text","text":"the secret","TEXT":"fine"}]}`)); err != nil {
		t.Fatal(err)
	}
	s.UseAdmitted(c.Middleware)
	ctx := mcp.WithIdentity(context.Background(), mcp.Identity{Subject: "alice", Role: "editor"})
	do := func(name, args string) error {
		_, err := s.Call(ctx, "tools/call", json.RawMessage(`{"name":"`+name+`","arguments":`+args+`}`))
		return err
	}
	if err := do("echo", `{"text":"fine"}`); err != nil {
		t.Fatalf("a plain call: %v", err)
	}
	if msg := forbidden(t, do("echo", `{"text":"the secret"}`), "dlp"); msg != "No secrets here." {
		t.Errorf("the hook's own denial: %q", msg)
	}
	ran.Delete("echo")
	msg := forbidden(t, do("echo", `{"text":"the secret","TEXT":"fine"}`), "dlp")
	if !strings.Contains(msg, `"text" and "TEXT"`) || !strings.Contains(msg, "params") {
		t.Errorf("twin keys in the params: %q, want the keys named", msg)
	}
	if args, ok := ran.Load("echo"); ok {
		t.Errorf("the backend got %s", args)
	}
	msg = forbidden(t, do("leak", `{}`), "dlp")
	if !strings.Contains(msg, `"text" and "TEXT"`) || !strings.Contains(msg, "answer") {
		t.Errorf("twin keys in the answer: %q, want the keys named", msg)
	}
	if counts["dlp deny"] != 3 {
		t.Errorf("counted %v, want 3 denials", counts)
	}
}
