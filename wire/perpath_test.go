// perpath_test.go runs the per-path form over real loopback WebSockets:
// one message each way and a clean close, the result and the error going
// through byte for byte, the defined answer to a first message that is not
// binary, and the notifications stream.

package wire_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/wire"
)

// pathServer serves each unary path with call, counting the calls, and
// the notifications path with stream.
type pathServer struct {
	URL   string
	wg    sync.WaitGroup
	mu    sync.Mutex
	calls []string
	errs  []error
}

func startPathServer(t *testing.T, call func(context.Context, []byte) wire.Response,
	stream func(context.Context, func(wire.Response) error)) *pathServer {
	ps := &pathServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.wg.Add(1)
		defer ps.wg.Done()
		var err error
		if r.URL.Path == wire.PathNotifications {
			err = wire.ServeSubscription(w, r, stream)
		} else {
			err = wire.ServePath(w, r, func(ctx context.Context, params []byte) wire.Response {
				ps.mu.Lock()
				ps.calls = append(ps.calls, r.URL.Path+" "+string(params))
				ps.mu.Unlock()
				return call(ctx, params)
			})
		}
		ps.mu.Lock()
		ps.errs = append(ps.errs, err)
		ps.mu.Unlock()
	}))
	ps.URL = "ws" + strings.TrimPrefix(srv.URL, "http")
	t.Cleanup(func() {
		ps.wg.Wait()
		srv.Close()
	})
	return ps
}

func TestCallPathRelaysResultAndErrorUnchanged(t *testing.T) {
	answers := map[string]string{
		`{"name":"ok"}`:     "\x00{\"content\":[],\"structuredContent\":{\"n\":123456789012345678901234567890},\"unknown\":1}",
		`{"name":"custom"}`: "\x01{\"code\":-32001,\"message\":\"custom\",\"data\":{\"retry\":true}}",
	}
	ps := startPathServer(t, func(_ context.Context, params []byte) wire.Response {
		r, err := wire.DecodeResponse([]byte(answers[string(params)]))
		if err != nil {
			return wire.ErrorResponse(jsonrpc.CodeInternalError, err.Error())
		}
		return r
	}, nil)
	ctx := testContext(t)
	for params, want := range answers {
		resp, err := wire.CallPath(ctx, ps.URL, wire.PathCallTool, []byte(params))
		if err != nil {
			t.Fatalf("CallPath: %v", err)
		}
		if got := string(resp.Append(nil)); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	ps.wg.Wait()
	for _, err := range ps.errs {
		if err != nil {
			t.Errorf("ServePath: %v", err)
		}
	}
}

// TestServePathNotBinary: a first message that is not binary is answered
// [1] -32602 "params were not a binary message", and call never runs.
func TestServePathNotBinary(t *testing.T) {
	ps := startPathServer(t, func(context.Context, []byte) wire.Response {
		return wire.Response{Result: []byte(`{}`)}
	}, nil)
	ctx := testContext(t)
	ws, _, err := websocket.Dial(ctx, ps.URL+wire.PathListTools, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageText, []byte("null")); err != nil {
		t.Fatal(err)
	}
	typ, msg, err := ws.Read(ctx)
	if err != nil || typ != websocket.MessageBinary {
		t.Fatalf("read %v %v", typ, err)
	}
	resp, err := wire.DecodeResponse(msg)
	if err != nil || resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams ||
		resp.Error.Message != wire.NotBinaryMessage {
		t.Fatalf("answer %q, %v", msg, err)
	}
	if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("then %v, want a clean close", err)
	}
	ps.wg.Wait()
	if len(ps.calls) != 0 {
		t.Fatalf("call ran: %q", ps.calls)
	}
}

// TestServePathSocketEndsFirst: a client that goes before sending anything
// is never served; ServePath returns.
func TestServePathSocketEndsFirst(t *testing.T) {
	ps := startPathServer(t, func(context.Context, []byte) wire.Response {
		return wire.Response{Result: []byte(`{}`)}
	}, nil)
	ctx := testContext(t)
	ws, _, err := websocket.Dial(ctx, ps.URL+wire.PathListTools, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = ws.Close(websocket.StatusNormalClosure, "")
	ps.wg.Wait()
	if len(ps.calls) != 0 {
		t.Fatalf("call ran: %q", ps.calls)
	}
}

// TestCallPathNotServed: a clean close with no message means "not served".
func TestCallPathNotServed(t *testing.T) {
	url := startRawServer(t, func(p *rawPeer) {
		_, _, _ = p.ws.Read(context.Background())
		_ = p.ws.Close(websocket.StatusNormalClosure, "")
	})
	if _, err := wire.CallPath(testContext(t), url, wire.PathListTools, []byte("null")); !errors.Is(err, wire.ErrNotServed) {
		t.Fatalf("err = %v, want ErrNotServed", err)
	}
}

func TestCallPathAnswerNotBinary(t *testing.T) {
	url := startRawServer(t, func(p *rawPeer) {
		_, _, _ = p.ws.Read(context.Background())
		p.sendText("\x00{}")
		_ = p.ws.Close(websocket.StatusNormalClosure, "")
	})
	if _, err := wire.CallPath(testContext(t), url, wire.PathListTools, []byte("null")); !errors.Is(err, wire.ErrNotBinary) {
		t.Fatalf("err = %v, want ErrNotBinary", err)
	}
}

func TestSubscribePathStreamsUntilTheServerCloses(t *testing.T) {
	ps := startPathServer(t, nil, func(ctx context.Context, send func(wire.Response) error) {
		for _, n := range []string{`{"method":"a"}`, `{"method":"b","params":{"n":1e400}}`} {
			if err := send(wire.Response{Result: []byte(n)}); err != nil {
				return
			}
		}
		_ = send(wire.ErrorResponse(jsonrpc.CodeInternalError, "upstream gone"))
	})
	ctx := testContext(t)
	sub, err := wire.SubscribePath(ctx, ps.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var got []string
	for {
		r, err := sub.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(r.Append(nil)))
	}
	want := []string{"\x00{\"method\":\"a\"}", "\x00{\"method\":\"b\",\"params\":{\"n\":1e400}}",
		"\x01{\"code\":-32603,\"message\":\"upstream gone\"}"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q", got)
	}
}

// TestSubscriptionCloseEndsTheServersStream: the client closing the path
// ends the server's ctx.
func TestSubscriptionCloseEndsTheServersStream(t *testing.T) {
	ended := make(chan struct{})
	ps := startPathServer(t, nil, func(ctx context.Context, send func(wire.Response) error) {
		_ = send(wire.Response{Result: []byte(`{"method":"hello"}`)})
		<-ctx.Done()
		close(ended)
	})
	ctx := testContext(t)
	sub, err := wire.SubscribePath(ctx, ps.URL)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := sub.Next(ctx); err != nil || string(r.Result) != `{"method":"hello"}` {
		t.Fatal(r, err)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	receive(t, ended)
}

func TestCallPathUnknownPath(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := wire.CallPath(testContext(t), "ws"+strings.TrimPrefix(srv.URL, "http"), "/nope", nil)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("err = %v", err)
	}
}
