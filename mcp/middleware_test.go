// middleware_test.go pins the net/http-like composition: Use wraps every
// method outermost first, Handle overrides a method, and a panicking
// handler costs one -32603 answer, not the session.

package mcp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestUseWrapsEveryMethodOutermostFirst(t *testing.T) {
	var mu sync.Mutex
	var trace []string
	record := func(s string) {
		mu.Lock()
		trace = append(trace, s)
		mu.Unlock()
	}
	layer := func(name string) mcp.Middleware {
		return func(next mcp.Handler) mcp.Handler {
			return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
				record(name + ">" + r.Method)
				res, err := next.ServeMCP(ctx, r)
				record(name + "<" + r.Method)
				return res, err
			})
		}
	}
	srv := newServer(t, mcp.Options{})
	mustAdd(t, srv.AddTools(&mcp.Tool{Name: "t", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		record("handler")
		return json.RawMessage(`{"content":[]}`), nil
	}}))
	srv.Use(layer("outer"))
	srv.Use(layer("inner"))

	ss := newSession(t, srv, mcp.SessionOptions{ID: "s"})
	initialize(t, ss, mcp.LatestVersion)
	result(t, call(t, ss, "tools/call", `{"name":"t"}`))
	for _, method := range []string{"ping", "tools/list", "resources/list", "prompts/list", "logging/setLevel"} {
		call(t, ss, method, `{"level":"info"}`)
	}
	rpcError(t, call(t, ss, "no/such", ""), jsonrpc.CodeMethodNotFound)

	want := []string{
		"outer>initialize", "inner>initialize", "inner<initialize", "outer<initialize",
		"outer>tools/call", "inner>tools/call", "handler", "inner<tools/call", "outer<tools/call",
	}
	for _, method := range []string{"ping", "tools/list", "resources/list", "prompts/list", "logging/setLevel", "no/such"} {
		want = append(want, "outer>"+method, "inner>"+method, "inner<"+method, "outer<"+method)
	}
	if !slices.Equal(trace, want) {
		t.Fatalf("trace\n%s\nwant\n%s", strings.Join(trace, "\n"), strings.Join(want, "\n"))
	}
}

func TestMiddlewareCanAnswerInstead(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	srv.Use(func(next mcp.Handler) mcp.Handler {
		return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
			if r.Method == "tools/list" {
				return nil, jsonrpc.NewError(jsonrpc.CodeRateLimited, "rate limited", map[string]any{"kind": "rate_limited", "retryAfterSeconds": 2})
			}
			return next.ServeMCP(ctx, r)
		})
	})
	ss, _ := readySession(t, srv)
	e := rpcError(t, call(t, ss, "tools/list", ""), jsonrpc.CodeRateLimited)
	if !strings.Contains(string(e.Data), `"retryAfterSeconds":2`) {
		t.Fatalf("data %s", e.Data)
	}
}

func TestHandleOverridesAMethod(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	srv.Handle("ping", mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return json.RawMessage(`{"pong":true}`), nil
	}))
	srv.Handle("x/echo", mcp.HandlerFunc(func(_ context.Context, r *mcp.Request) (json.RawMessage, error) {
		return r.Params, nil
	}))
	ss, _ := readySession(t, srv)
	if got := result(t, call(t, ss, "ping", "")); string(got) != `{"pong":true}` {
		t.Fatalf("ping %s", got)
	}
	if got := result(t, call(t, ss, "x/echo", `{"a": 123456789012345678901234567890}`)); string(got) != `{"a": 123456789012345678901234567890}` {
		t.Fatalf("x/echo %s", got)
	}
}

func TestPanickingHandlerIsInternalError(t *testing.T) {
	var logs testkit.Output
	srv := newServer(t, mcp.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	mustAdd(t, srv.AddTools(
		&mcp.Tool{Name: "bomb", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			panic("kaboom: secret=hunter2")
		}},
		textTool("fine", "still here"),
	))
	ss, _ := readySession(t, srv)

	m := call(t, ss, "tools/call", `{"name":"bomb"}`)
	e := rpcError(t, m, jsonrpc.CodeInternalError)
	if e.Message != "internal error" || len(e.Data) != 0 {
		t.Fatalf("error %s, want a bare internal error", m.Error)
	}
	if strings.Contains(string(m.Error), "hunter2") {
		t.Fatal("the panic value reached the client")
	}

	res := decode[toolResult](t, result(t, call(t, ss, "tools/call", `{"name":"fine"}`)))
	if res.text(t) != "still here" {
		t.Fatalf("the session did not keep serving: %+v", res)
	}

	out := logs.String()
	if !strings.Contains(out, "panicked") || !strings.Contains(out, "kaboom") || !strings.Contains(out, `"method":"tools/call"`) {
		t.Fatalf("the panic was not logged:\n%s", out)
	}
	if !strings.Contains(out, `"level":"ERROR"`) {
		t.Fatalf("the panic was not logged as an error:\n%s", out)
	}
}

func TestHandlerPlainErrorIsInternalError(t *testing.T) {
	var logs testkit.Output
	srv := newServer(t, mcp.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	srv.Handle("x/fail", mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return nil, errStr("db password=hunter2 rejected")
	}))
	ss, _ := readySession(t, srv)
	m := call(t, ss, "x/fail", "")
	if e := rpcError(t, m, jsonrpc.CodeInternalError); e.Message != "internal error" || strings.Contains(string(m.Error), "hunter2") {
		t.Fatalf("error %s leaks the detail", m.Error)
	}
	if !strings.Contains(logs.String(), "hunter2") {
		t.Fatalf("the detail did not reach the log:\n%s", logs.String())
	}
}

type errStr string

func (e errStr) Error() string { return string(e) }
