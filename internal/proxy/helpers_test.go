// helpers_test.go is the upstream the tests relay to — the conformance
// fixture plus tools that pin the proxy's rules (fidelity, notifications,
// server-to-client requests, secrets in the environment, dying mid-call) —
// and the three transports it is served on.

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// fidelityResult is a tool result no typed struct would survive: pretty
// printed, with unknown fields, _meta, isError, structuredContent and
// numbers beyond float64.
const fidelityResult = `{
  "content": [
    {"type": "text", "text": "exact \u00e9 <&>", "annotations": {"audience": ["user"], "x-unknown": true}}
  ],
  "structuredContent": {"big": 123456789012345678901234567890, "neg": -98765432109876543210987654321, "f": 1.50, "huge": 1E+400},
  "isError": true,
  "_meta": {"vendor.example/trace": "abc", "n": -0.0},
  "unknownField": [1, 2, {"deep": null}]
}`

// fidelityError is a JSON-RPC error with a custom code, data and a member
// JSON-RPC does not define.
const fidelityError = `{
  "code": -32099,
  "message": "custom failure",
  "data": {"retryAfter": 123456789012345678901234567890, "why": ["a", "b"]},
  "x-extra": "kept"
}`

// testServer is the fixture plus the proxy's test tools. exitTool adds a
// tool that ends the process mid-call (only for a child process).
func testServer(exitTool bool) *mcp.Server {
	s := fixture.New(fixture.Options{})
	tools := []*mcp.Tool{
		{Name: "fidelity", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(fidelityResult), nil
		}},
		{Name: "custom_error", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return nil, jsonrpc.RawError(json.RawMessage(fidelityError))
		}},
		{Name: "notify", Handler: notifyTool},
		{Name: "block", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done() // until the client cancels
			return nil, ctx.Err()
		}},
		{Name: "ask_client", Handler: askClientTool},
		{Name: "ask_roots", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			res, err := r.Call(ctx, "roots/list", nil)
			if err != nil {
				return nil, err
			}
			return textResult(string(res))
		}},
		{Name: "env", Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			name, _ := jsonrpc.LookupString(args, "name")
			return textResult(os.Getenv(name))
		}},
	}
	if exitTool {
		tools = append(tools, &mcp.Tool{Name: "exit", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			os.Exit(3)
			return nil, nil
		}})
	}
	if err := s.AddTools(tools...); err != nil {
		panic(err)
	}
	return s
}

func textResult(s string) (json.RawMessage, error) {
	return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(s)}})
}

// notifyTool sends {"count": N} notifications related to the call, before
// its result: they travel ahead of the answer on the same stream, so they
// have been fanned out by the time the exchange returns.
func notifyTool(ctx context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Count int `json:"count"`
	}
	_ = json.Unmarshal(args, &a)
	for i := 1; i <= a.Count; i++ {
		if err := r.Notify(ctx, "notifications/message", map[string]any{"level": "info", "data": map[string]int{"seq": i}}); err != nil {
			return nil, err
		}
	}
	return textResult("sent")
}

// askClientTool asks the client for a ping and for sampling, and reports
// what it answered to each.
func askClientTool(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
	var out []string
	for _, method := range []string{"ping", "sampling/createMessage"} {
		res, err := r.Call(ctx, method, nil)
		var je *jsonrpc.Error
		switch {
		case err == nil:
			out = append(out, method+" => "+string(res))
		case errors.As(err, &je):
			out = append(out, fmt.Sprintf("%s => error %d", method, je.Code))
		default:
			return nil, err
		}
	}
	return textResult(strings.Join(out, "; "))
}

// toolText is the first text block of a tools/call result.
func toolText(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("not a tool result with text: %s (%v)", res, err)
	}
	return r.Content[0].Text
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newUpstream(t *testing.T, cfg UpstreamConfig) *Upstream {
	t.Helper()
	u, err := NewUpstream(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	return u
}

func call(t *testing.T, ctx context.Context, u *Upstream, tool string, args string) json.RawMessage {
	t.Helper()
	res, rpcErr, err := u.Exchange(ctx, "tools/call", json.RawMessage(`{"name":"`+tool+`","arguments":`+args+`}`))
	if err != nil || rpcErr != nil {
		t.Fatalf("%s: err %v, rpc error %v", tool, err, rpcErr)
	}
	return res
}

// counter counts the JSON-RPC methods POSTed through it. It hangs up on a
// tools/call of the tool named die, mid-call, without an answer, and cuts
// the answer stream of the tool named cut before the answer.
type counter struct {
	next http.Handler
	die  string
	cut  string
	// arrived, when set, hears every tools/call key as it arrives.
	arrived chan string

	mu    sync.Mutex
	calls map[string]int // by method, and by "tools/call NAME"
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		key := ""
		if m, err := jsonrpc.Parse(body); err == nil {
			key = m.Method
			if name, ok := jsonrpc.LookupString(m.Params, "name"); ok && m.Method == "tools/call" {
				key += " " + name
			}
		}
		c.mu.Lock()
		if c.calls == nil {
			c.calls = map[string]int{}
		}
		c.calls[key]++
		c.mu.Unlock()
		if c.arrived != nil && strings.HasPrefix(key, "tools/call ") {
			select {
			case c.arrived <- key:
			default:
			}
		}
		if c.die != "" && key == "tools/call "+c.die {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		if c.cut != "" && key == "tools/call "+c.cut {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, ": the answer follows\n\n")
			return
		}
	}
	c.next.ServeHTTP(w, r)
}

func (c *counter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[key]
}

// transport is one way to reach the test server.
type transport struct {
	name string
	// compacted: the transport puts each message on one line, so bytes
	// compare equal after JSON whitespace compaction.
	compacted bool
	config    func(t *testing.T) UpstreamConfig
}

var transports = []transport{
	{name: "streamable", config: func(t *testing.T) UpstreamConfig {
		srv, _ := serveStreamable(t, "")
		return UpstreamConfig{Kind: upstream.KindHTTP, URL: srv.URL, HTTPClient: srv.Client()}
	}},
	{name: "sse", config: func(t *testing.T) UpstreamConfig {
		h := mcphttp.NewSSEHandler(testServer(false), mcphttp.Options{})
		mux := http.NewServeMux()
		mux.Handle("/sse", h)
		mux.Handle("/messages", h)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		t.Cleanup(func() { _ = h.Close() })
		return UpstreamConfig{Kind: upstream.KindSSE, URL: srv.URL + "/sse", HTTPClient: srv.Client()}
	}},
	{name: "stdio", compacted: true, config: func(t *testing.T) UpstreamConfig {
		cmd, env := childCommand()
		return UpstreamConfig{Kind: upstream.KindStdio, Command: cmd, Env: env, Restart: upstream.Backoff{Base: time.Millisecond}}
	}},
}

// serveStreamable serves the test server over Streamable HTTP behind a
// counter that hangs up on tool die and cuts the answer of tool cut.
func serveStreamable(t *testing.T, die string) (*httptest.Server, *counter) {
	h := mcphttp.NewHandler(testServer(false), mcphttp.Options{})
	c := &counter{next: h, die: die, cut: "cut"}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)
	return srv, c
}

// closedURL is an http URL where nothing listens.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr
}

// logBuffer collects slog output from every goroutine.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// startsFile is a fresh file a child records its starts in, and the
// environment entry that tells it so.
func startsFile(t *testing.T) (path, env string) {
	path = filepath.Join(t.TempDir(), "starts")
	return path, startsEnv + "=" + path
}

// countLines counts the starts recorded (0 if none).
func countLines(t *testing.T, path string) int {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
	}
	return n
}

// awaitStreams waits until up's hub has n notification streams open. A
// channel is served on a goroutine of its own, so a stream opened just
// before a call may otherwise register after the call's notifications
// went out, and miss them.
func awaitStreams(t *testing.T, up *Upstream, n int) {
	t.Helper()
	testkit.WaitFor(t, "the notification stream to open", func() bool {
		up.hub.mu.Lock()
		defer up.hub.mu.Unlock()
		return len(up.hub.streams) >= n
	})
}
