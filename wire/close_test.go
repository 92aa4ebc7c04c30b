// close_test.go pins the connection's end: whichever side ends it, and
// however, every open scope and channel ends without a finish — readers
// get ErrConnectionClosed, handlers see their context end — and nothing is
// left running.

package wire_test

import (
	"context"
	"errors"
	"testing"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
)

// holdOpen answers scopes and keeps every scope and channel open until
// the connection ends, reporting each channel's start on started, and
// what Respond says after the end on after.
func holdOpen(started chan<- struct{}, after chan<- error) wire.HandlerFunc {
	return func(ctx context.Context, r *wire.Responder, p []byte) {
		if !r.IsChannel() {
			_ = r.Respond([]byte("begun:" + string(p)))
		} else {
			started <- struct{}{}
		}
		<-ctx.Done()
		after <- r.Respond([]byte("after the end"))
	}
}

func TestServerEndingEndsOpenStreams(t *testing.T) {
	serveCtx, stop := context.WithCancel(context.Background())
	started, after := make(chan struct{}, 1), make(chan error, 2)
	srv := startServerCtx(t, serveCtx, holdOpen(started, after))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	scope := openScope(t, c, "begin")
	ch, _ := scope.OpenChannel(ctx, []byte("held"))
	receive(t, started)

	stop()

	for _, next := range []func(context.Context) ([]byte, error){scope.Next, ch.Next} {
		if _, err := next(ctx); !errors.Is(err, wire.ErrConnectionClosed) {
			t.Fatalf("Next = %v, want ErrConnectionClosed", err)
		}
	}
	receive(t, c.Done())
	if !errors.Is(c.Err(), wire.ErrConnectionClosed) || websocket.CloseStatus(c.Err()) != websocket.StatusGoingAway {
		t.Fatalf("Err = %v", c.Err())
	}
	if _, err := c.Open(ctx, nil); !errors.Is(err, wire.ErrConnectionClosed) {
		t.Fatalf("Open after the end = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close after the end = %v", err)
	}
	srv.waitServed(t)
	for range 2 {
		if err := receive(t, after); !errors.Is(err, wire.ErrConnectionClosed) {
			t.Fatalf("Respond after the end = %v", err)
		}
	}
	if errs := srv.serveErrs(); len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("Serve returned %v", errs)
	}
}

func TestClientCloseEndsHandlers(t *testing.T) {
	started, after := make(chan struct{}, 1), make(chan error, 2)
	srv := startServer(t, holdOpen(started, after))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	scope := openScope(t, c, "begin")
	ch, _ := scope.OpenChannel(ctx, []byte("held"))
	receive(t, started)

	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	if _, err := ch.Next(ctx); !errors.Is(err, wire.ErrConnectionClosed) {
		t.Fatalf("channel Next = %v", err)
	}
	srv.waitServed(t)
	for range 2 {
		if err := receive(t, after); !errors.Is(err, wire.ErrConnectionClosed) {
			t.Fatalf("Respond after the end = %v", err)
		}
	}
	if errs := srv.serveErrs(); len(errs) != 1 || errs[0] != nil {
		t.Fatalf("Serve after a normal close returned %v", errs)
	}
}

// TestAbruptEndEndsOpenStreams: a peer that vanishes without a close
// handshake ends everything the same way.
func TestAbruptEndEndsOpenStreams(t *testing.T) {
	url := startRawServer(t, func(p *rawPeer) {
		p.recv() // the request
		p.send(wire.Frame{Type: wire.TypeResponse, Scope: 1, Payload: []byte("begun")})
		p.recv() // the channel request
		_ = p.ws.CloseNow()
	})
	c := dialClient(t, url, nil)
	ctx := testContext(t)
	scope, _ := c.Open(ctx, []byte("begin"))
	if got, err := scope.Next(ctx); err != nil || string(got) != "begun" {
		t.Fatal(got, err)
	}
	ch, _ := scope.OpenChannel(ctx, []byte("x"))
	if _, err := ch.Next(ctx); !errors.Is(err, wire.ErrConnectionClosed) {
		t.Fatalf("channel Next = %v", err)
	}
	if _, err := scope.Next(ctx); !errors.Is(err, wire.ErrConnectionClosed) {
		t.Fatalf("scope Next = %v", err)
	}
}

// TestAuthorizationFrameClosesTheConnection: the proxy connection has no
// authorization, so a type-0 frame ends it.
func TestAuthorizationFrameClosesTheConnection(t *testing.T) {
	after := make(chan error, 1)
	srv := startServer(t, holdOpen(nil, after))
	p := dialRaw(t, srv.URL)
	p.send(wire.Frame{Type: wire.TypeRequest, Scope: 1, Payload: []byte("begin")})
	p.recv()
	p.send(wire.Frame{Type: wire.TypeAuthorization, Payload: []byte("token")})
	_, _, err := p.ws.Read(testContext(t))
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("read %v, want a policy-violation close", err)
	}
	srv.waitServed(t)
	if err := receive(t, after); !errors.Is(err, wire.ErrConnectionClosed) {
		t.Fatal(err)
	}
	if errs := srv.serveErrs(); len(errs) != 1 || errs[0] == nil {
		t.Fatalf("Serve returned %v", errs)
	}
}
