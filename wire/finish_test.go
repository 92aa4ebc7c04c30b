// finish_test.go pins how exchanges end: a bare finish told apart from an
// answered one, nothing written after a finish, a scope's finish ending its
// channels, and a reader's impatience ending nothing.

package wire_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

// TestBareFinish: a handler that returns without answering is a finish
// with nothing before it, "received, not served" — told apart from an
// answered finish, and still an end for a loop that stops at io.EOF.
func TestBareFinish(t *testing.T) {
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		if !r.IsChannel() && string(p) == "begin" {
			echo(ctx, r, p)
		}
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	scope, _ := c.Open(ctx, []byte("unknown"))
	if _, err := scope.Next(ctx); !errors.Is(err, wire.ErrBareFinish) || !errors.Is(err, io.EOF) {
		t.Fatalf("scope: %v, want ErrBareFinish", err)
	}
	begun := openScope(t, c, "begin")
	ch, _ := begun.OpenChannel(ctx, []byte("x"))
	if _, err := ch.Next(ctx); err != wire.ErrBareFinish {
		t.Fatalf("channel: %v, want ErrBareFinish", err)
	}
	if _, err := ch.Next(ctx); err != wire.ErrBareFinish {
		t.Fatalf("the end repeats: %v", err)
	}
}

func TestResponderAfterFinish(t *testing.T) {
	result := make(chan [2]error, 1)
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		if !r.IsChannel() {
			echo(ctx, r, p)
			return
		}
		_ = r.Finish()
		result <- [2]error{r.Respond([]byte("late")), r.Finish()}
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	ch, _ := openScope(t, c, "begin").OpenChannel(ctx, []byte("x"))
	if _, err := ch.Next(ctx); err != wire.ErrBareFinish {
		t.Fatal(err)
	}
	if errs := receive(t, result); errs[0] != wire.ErrFinished || errs[1] != wire.ErrFinished {
		t.Fatalf("after the finish: %v", errs)
	}
}

// TestScopeFinishEndsItsChannels: finishing a scope ends the channels
// open in it, on both sides.
func TestScopeFinishEndsItsChannels(t *testing.T) {
	finish := make(chan struct{})
	holding := make(chan struct{})
	served := make(chan error, 1)
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		if !r.IsChannel() {
			_ = r.Respond([]byte("begun:" + string(p)))
			<-finish
			return // finishes the scope
		}
		close(holding)
		<-ctx.Done()
		served <- r.Respond([]byte("too late"))
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	scope := openScope(t, c, "begin")
	ch, _ := scope.OpenChannel(ctx, []byte("held"))
	receive(t, holding)
	close(finish)
	if _, err := scope.Next(ctx); err != io.EOF {
		t.Fatalf("scope: %v", err)
	}
	if _, err := ch.Next(ctx); !errors.Is(err, wire.ErrScopeFinished) {
		t.Fatalf("channel: %v, want ErrScopeFinished", err)
	}
	if err := receive(t, served); !errors.Is(err, wire.ErrScopeFinished) {
		t.Fatalf("server side: %v, want ErrScopeFinished", err)
	}
	if _, err := scope.OpenChannel(ctx, nil); !errors.Is(err, wire.ErrScopeFinished) {
		t.Fatalf("open on a finished scope: %v", err)
	}
}

// TestNextHonoursItsContext: a Next that gives up leaves the exchange as
// it was: nobody cancels on this wire.
func TestNextHonoursItsContext(t *testing.T) {
	release := make(chan struct{})
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		if !r.IsChannel() {
			echo(ctx, r, p)
			return
		}
		<-release
		_ = r.Respond([]byte("late"))
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	ch, _ := openScope(t, c, "begin").OpenChannel(ctx, []byte("x"))
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ch.Next(short); err != context.Canceled {
		t.Fatalf("Next = %v", err)
	}
	close(release)
	if got, end := readAll(ctx, ch.Next); end != io.EOF || !slices.Equal(got, []string{"late"}) {
		t.Fatalf("%q then %v", got, end)
	}
}
