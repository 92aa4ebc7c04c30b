package wire_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
)

// The keepalive test's pings: short, so that a vanished peer is noticed
// in a fraction of a second.
const (
	kaEvery = 20 * time.Millisecond
	kaWait  = 40 * time.Millisecond
)

// A peer that stops reading answers no ping (its pongs are written by its
// reader): the server ends the connection, its peer gone, and Serve
// returns saying so. This is a gateway whose host vanished.
func TestAServerEndsAConnectionWhosePeerAnswersNoPing(t *testing.T) {
	ctx := testContext(t)
	served := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		served <- wire.Serve(r.Context(), ws, wire.HandlerFunc(func(context.Context, *wire.Responder, []byte) {}),
			&wire.Options{KeepAlive: kaEvery, KeepAliveTimeout: kaWait})
	}))
	defer srv.Close()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow() // never read: no pong is ever sent
	err = receive(t, served)
	if err == nil || !strings.Contains(err.Error(), "no pong") {
		t.Fatalf("Serve returned %v, want the end of a peer that answers no ping", err)
	}
}

// The client does the same with a proxy that answers no ping.
func TestAClientEndsAConnectionWhosePeerAnswersNoPing(t *testing.T) {
	ctx := testContext(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		<-release // never read
	}))
	defer srv.Close()
	defer close(release)
	cl, err := wire.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/",
		&wire.ClientOptions{Options: wire.Options{KeepAlive: kaEvery, KeepAliveTimeout: kaWait}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	select {
	case <-cl.Done():
	case <-ctx.Done():
		t.Fatal("the client kept a connection whose peer answers no ping")
	}
	if err := cl.Err(); !errors.Is(err, wire.ErrConnectionClosed) || !strings.Contains(err.Error(), "no pong") {
		t.Fatalf("the connection ended with %v, want no pong", err)
	}
}

// A quiet connection whose peer answers is kept: many keepalive periods
// pass without a frame, and an exchange then goes through.
func TestAQuietConnectionWhosePeerAnswersIsKept(t *testing.T) {
	ctx := testContext(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		_ = wire.Serve(r.Context(), ws, wire.HandlerFunc(func(_ context.Context, rs *wire.Responder, p []byte) {
			_ = rs.Respond(p)
		}), &wire.Options{KeepAlive: kaEvery, KeepAliveTimeout: kaWait})
	}))
	defer srv.Close()
	cl, err := wire.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/",
		&wire.ClientOptions{Options: wire.Options{KeepAlive: kaEvery, KeepAliveTimeout: kaWait}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	quiet := time.NewTimer(10 * (kaEvery + kaWait)) // the time passing is what is tested
	select {
	case <-quiet.C:
	case <-cl.Done():
		t.Fatalf("a healthy quiet connection ended: %v", cl.Err())
	}
	scope, err := cl.Open(ctx, []byte("\x01{}"))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := scope.Next(ctx); err != nil || string(p) != "\x01{}" {
		t.Fatalf("after the quiet: %q %v", p, err)
	}
}
