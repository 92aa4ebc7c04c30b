// wire_helpers_test.go drives a Server the way the gateway does: package
// wire over a real socket on 127.0.0.1, in both forms of the wire. A form
// is the same five MCP exchanges either way, so every test of an exchange
// runs over both.

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/wire"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// serveProxy serves a proxy over httptest and returns its ws:// base URL.
func serveProxy(t *testing.T, o Options) string {
	t.Helper()
	ts := httptest.NewServer(NewServer(o))
	t.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http")
}

// serveMCP serves an MCP server over Streamable HTTP at /mcp and returns
// that URL.
func serveMCP(t *testing.T, s *mcp.Server) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler(t, s))
	return serveHandler(t, mux) + "/mcp"
}

// mcpHandler is s over Streamable HTTP, closed at the test's end.
func mcpHandler(t *testing.T, s *mcp.Server) http.Handler {
	h := mcphttp.NewHandler(s, mcphttp.Options{})
	t.Cleanup(h.Close)
	return h
}

// serveHandler serves h on 127.0.0.1 and returns its base URL.
func serveHandler(t *testing.T, h http.Handler) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// fixtureUpstream is the conformance fixture over Streamable HTTP.
func fixtureUpstream(t *testing.T, logs *slog.Logger) *Upstream {
	return newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: serveMCP(t, fixture.New(fixture.Options{})), Logger: logs})
}

// logWatch is the proxy's log, as JSON lines at debug level. A test waits
// on it for the proxy to reach a point it announces (a stream open, an
// exchange held at the gate): the log is the proxy's only word that
// something has started and not finished.
type logWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	wake chan struct{}
}

func (w *logWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wake != nil {
		close(w.wake)
		w.wake = nil
	}
	return w.buf.Write(p)
}

func (w *logWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (w *logWatch) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitFor waits until the log holds msg at least n times.
func (w *logWatch) waitFor(t *testing.T, ctx context.Context, msg string, n int) {
	t.Helper()
	for {
		w.mu.Lock()
		got := strings.Count(w.buf.String(), msg)
		if w.wake == nil {
			w.wake = make(chan struct{})
		}
		wake := w.wake
		w.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatalf("the proxy never logged %q %d times (%d); log:\n%s", msg, n, got, w)
		}
	}
}

// What the proxy logs at the points tests wait for.
const (
	logStreamOpen = "proxy: notification stream open"
	logAtGate     = "proxy: exchange waits for the secrets"
	logAwaitBegun = "proxy: channel waits for Begun"
)

// A form is one way of asking the proxy for MCP exchanges.
type form interface {
	name() string
	// exchange makes one MCP exchange and returns its one answer.
	exchange(t *testing.T, ctx context.Context, method, params string) wire.Response
	// start sends one MCP exchange and returns at once.
	start(t *testing.T, ctx context.Context, method, params string) pending
	// subscribe opens a notification stream.
	subscribe(t *testing.T, ctx context.Context) subscription
}

// subscription is a notification stream: a path, or a channel.
type subscription interface {
	Next(ctx context.Context) (wire.Response, error)
}

// perPath is the per-path form: a connection per exchange.
type perPath struct{ base string }

func (perPath) name() string { return "per-path" }

var pathOf = map[string]string{
	"tools/list":     wire.PathListTools,
	"resources/list": wire.PathListResources,
	"tools/call":     wire.PathCallTool,
	"resources/read": wire.PathReadResource,
}

func (f perPath) exchange(t *testing.T, ctx context.Context, method, params string) wire.Response {
	t.Helper()
	return f.start(t, ctx, method, params).wait(t, ctx)
}

// pending is an exchange sent and not yet read.
type pending interface {
	// answered reports whether the answer has come, without waiting.
	answered() bool
	// wait returns the answer.
	wait(t *testing.T, ctx context.Context) wire.Response
}

func (f perPath) start(t *testing.T, ctx context.Context, method, params string) pending {
	p := &pathPending{what: method + " " + params, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.resp, p.err = wire.CallPath(ctx, f.base, pathOf[method], []byte(params))
	}()
	return p
}

type pathPending struct {
	what string
	done chan struct{}
	resp wire.Response
	err  error
}

func (p *pathPending) answered() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *pathPending) wait(t *testing.T, ctx context.Context) wire.Response {
	t.Helper()
	select {
	case <-p.done:
	case <-ctx.Done():
		t.Fatalf("%s: no answer", p.what)
	}
	if p.err != nil {
		t.Fatalf("%s: %v", p.what, p.err)
	}
	return p.resp
}

func (f perPath) subscribe(t *testing.T, ctx context.Context) subscription {
	t.Helper()
	sub, err := wire.SubscribePath(ctx, f.base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

// framed is the framed form: one connection, begun once, a channel per
// exchange on the begun scope.
type framed struct {
	cl    *wire.Client
	scope *wire.Scope
	begun wire.BeginAnswer
}

func (*framed) name() string { return "framed" }

// dialFramed opens the proxy's framed connection; the test's end closes it.
func dialFramed(t *testing.T, ctx context.Context, base string) *wire.Client {
	t.Helper()
	cl, err := wire.Dial(ctx, base+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// begin sends a tools begin and returns its scope and its one answer.
func begin(t *testing.T, ctx context.Context, cl *wire.Client, arguments string) (*wire.Scope, wire.BeginAnswer) {
	t.Helper()
	scope, err := cl.Open(ctx, wire.BeginTools{Arguments: json.RawMessage(arguments)}.Append(nil))
	if err != nil {
		t.Fatal(err)
	}
	p, err := scope.Next(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	ans, err := wire.DecodeBeginAnswer(p)
	if err != nil {
		t.Fatalf("begin answer %q: %v", p, err)
	}
	return scope, ans
}

// beginFramed dials and begins; the begin must succeed.
func beginFramed(t *testing.T, ctx context.Context, base string) *framed {
	t.Helper()
	cl := dialFramed(t, ctx, base)
	scope, ans := begin(t, ctx, cl, "null")
	if !ans.Begun() {
		t.Fatalf("begin refused: %s", ans.Error)
	}
	return &framed{cl: cl, scope: scope, begun: ans}
}

// request is the channel request for an MCP exchange.
func request(method, params string) wire.ChannelRequest {
	req, ok := wiremcp.ChannelRequest(method, json.RawMessage(params))
	if !ok {
		panic("no channel request for " + method)
	}
	return req
}

// open opens a channel on the begun scope.
func (f *framed) open(t *testing.T, ctx context.Context, payload []byte) *wire.Channel {
	t.Helper()
	ch, err := f.scope.OpenChannel(ctx, payload)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func (f *framed) exchange(t *testing.T, ctx context.Context, method, params string) wire.Response {
	t.Helper()
	return mcpAnswer(t, ctx, f.open(t, ctx, request(method, params).Append(nil)))
}

func (f *framed) start(t *testing.T, ctx context.Context, method, params string) pending {
	t.Helper()
	return channelPending{f.open(t, ctx, request(method, params).Append(nil))}
}

type channelPending struct{ ch *wire.Channel }

func (p channelPending) answered() bool { return !stillOpen(p.ch) }

func (p channelPending) wait(t *testing.T, ctx context.Context) wire.Response {
	t.Helper()
	return mcpAnswer(t, ctx, p.ch)
}

// mcpAnswer reads a channel's answer: exactly one response, then the
// finish.
func mcpAnswer(t *testing.T, ctx context.Context, ch *wire.Channel) wire.Response {
	t.Helper()
	p, err := ch.Next(ctx)
	if err != nil {
		t.Fatalf("channel %d: no answer: %v", ch.ID(), err)
	}
	resp, err := wire.DecodeResponse(p)
	if err != nil {
		t.Fatalf("channel %d: answer %q: %v", ch.ID(), p, err)
	}
	if _, err := ch.Next(ctx); !errors.Is(err, io.EOF) || errors.Is(err, wire.ErrBareFinish) {
		t.Fatalf("channel %d: after the answer: %v, want the finish", ch.ID(), err)
	}
	return resp
}

// stillOpen reports whether a channel has had nothing yet, without waiting.
func stillOpen(ch *wire.Channel) bool {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ch.Next(done)
	return errors.Is(err, context.Canceled)
}

// bareFinish reads a channel that must end with a bare finish.
func bareFinish(t *testing.T, ctx context.Context, ch *wire.Channel, what string) {
	t.Helper()
	if p, err := ch.Next(ctx); !errors.Is(err, wire.ErrBareFinish) {
		t.Errorf("%s: got %q, %v; want a bare finish", what, p, err)
	}
}

type channelSub struct{ ch *wire.Channel }

func (s channelSub) Next(ctx context.Context) (wire.Response, error) {
	p, err := s.ch.Next(ctx)
	if err != nil {
		return wire.Response{}, err
	}
	return wire.DecodeResponse(p)
}

func (f *framed) subscribe(t *testing.T, ctx context.Context) subscription {
	t.Helper()
	return channelSub{f.open(t, ctx, wire.McpNotifications{}.Append(nil))}
}

// result returns an answer's result, failing on an error answer.
func result(t *testing.T, resp wire.Response) json.RawMessage {
	t.Helper()
	if resp.Error != nil {
		t.Fatalf("error answer: %s", resp.Error.Raw())
	}
	return resp.Result
}

// errorAnswer returns an answer's error, failing on a result.
func errorAnswer(t *testing.T, resp wire.Response) json.RawMessage {
	t.Helper()
	if resp.Error == nil {
		t.Fatalf("result where an error was due: %.300s", resp.Result)
	}
	return resp.Error.Raw()
}

// notificationOf waits on sub for a notification with the given method,
// passing over any other the server sends meanwhile.
func notificationOf(t *testing.T, ctx context.Context, sub subscription, method string) json.RawMessage {
	t.Helper()
	for {
		resp, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", method, err)
		}
		msg := result(t, resp)
		var n struct {
			JSONRPC, Method string
		}
		if err := json.Unmarshal(msg, &n); err != nil || n.JSONRPC != "2.0" {
			t.Fatalf("not a JSON-RPC notification: %s", msg)
		}
		if n.Method == method {
			return msg
		}
	}
}
