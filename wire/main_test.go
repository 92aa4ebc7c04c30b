// main_test.go holds what the wire tests share: the leak check, a framed
// server on a real loopback WebSocket, a raw WebSocket peer that writes
// frames by hand, and a log buffer to read what was disregarded.

package wire_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/wire"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// waitLimit bounds every wait on the other side: a deadlock becomes a
// failure. It is never a way to let time pass.
const waitLimit = 10 * time.Second

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// receive waits for one value from ch, failing the test instead of
// hanging.
func receive[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("nothing received within %v", waitLimit)
		panic("unreachable")
	}
}

// logBuffer is a slog destination tests can read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// framedServer serves the framed form with h on 127.0.0.1 and records
// what each Serve returned.
type framedServer struct {
	URL  string
	Log  logBuffer
	srv  *httptest.Server
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

func startServer(t testing.TB, h wire.Handler) *framedServer {
	return startServerCtx(t, context.Background(), h)
}

// startServerCtx is startServer with every Serve bound to ctx.
func startServerCtx(t testing.TB, ctx context.Context, h wire.Handler) *framedServer {
	fs := &framedServer{}
	fs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		fs.wg.Add(1)
		defer fs.wg.Done()
		err = wire.Serve(ctx, ws, h, &wire.Options{Logger: fs.Log.logger()})
		fs.mu.Lock()
		fs.errs = append(fs.errs, err)
		fs.mu.Unlock()
	}))
	fs.URL = "ws" + strings.TrimPrefix(fs.srv.URL, "http")
	t.Cleanup(func() {
		fs.waitServed(t)
		fs.srv.Close()
	})
	return fs
}

// waitServed waits until every Serve has returned, handlers included.
func (fs *framedServer) waitServed(t testing.TB) {
	done := make(chan struct{})
	go func() { fs.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Errorf("Serve did not return")
	}
}

func (fs *framedServer) serveErrs() []error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]error(nil), fs.errs...)
}

func dialClient(t testing.TB, url string, opts *wire.ClientOptions) *wire.Client {
	c, err := wire.Dial(testContext(t), url, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rawPeer is a WebSocket peer that speaks frames by hand, to send what a
// well-behaved peer never would.
type rawPeer struct {
	t  testing.TB
	ws *websocket.Conn
}

func dialRaw(t testing.TB, url string) *rawPeer {
	ws, _, err := websocket.Dial(testContext(t), url, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = ws.Close(websocket.StatusNormalClosure, "") })
	return &rawPeer{t: t, ws: ws}
}

func (p *rawPeer) sendBytes(b []byte) {
	p.t.Helper()
	if err := p.ws.Write(testContext(p.t), websocket.MessageBinary, b); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

func (p *rawPeer) send(f wire.Frame) { p.t.Helper(); p.sendBytes(wire.AppendFrame(nil, f)) }

func (p *rawPeer) sendText(s string) {
	p.t.Helper()
	if err := p.ws.Write(testContext(p.t), websocket.MessageText, []byte(s)); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

func (p *rawPeer) recv() wire.Frame {
	p.t.Helper()
	typ, msg, err := p.ws.Read(testContext(p.t))
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	if typ != websocket.MessageBinary {
		p.t.Fatalf("read a %v message", typ)
	}
	f, err := wire.ParseFrame(msg)
	if err != nil {
		p.t.Fatalf("ParseFrame: %v", err)
	}
	return f
}

// expect reads one frame and checks it is want.
func (p *rawPeer) expect(want wire.Frame) {
	p.t.Helper()
	got := p.recv()
	if got.Type != want.Type || got.Scope != want.Scope || got.Channel != want.Channel ||
		!bytes.Equal(got.Payload, want.Payload) {
		p.t.Fatalf("got frame %v %d/%d %q, want %v %d/%d %q", got.Type, got.Scope, got.Channel, got.Payload,
			want.Type, want.Scope, want.Channel, want.Payload)
	}
}

// readAll reads a stream to its end, returning the pieces and the end.
func readAll(ctx context.Context, next func(context.Context) ([]byte, error)) ([]string, error) {
	var got []string
	for {
		p, err := next(ctx)
		if err != nil {
			return got, err
		}
		got = append(got, string(p))
	}
}
