// server_channel_test.go pins the channels the server opens on a client's
// scope: the framing both ways, the client's handler, and the two sides'
// separate numbering.

package wire_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

// TestServerOpenedChannels: the server opens channels on a client's scope
// and the client answers them; the two sides' numbers are separate spaces,
// so client channel 1 and server channel 1 are open at once.
func TestServerOpenedChannels(t *testing.T) {
	fromServer := make(chan string, 1)
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		if r.IsChannel() {
			<-ctx.Done() // hold the client's channel open
			return
		}
		_ = r.Respond([]byte("begun:" + string(p)))
		ch, err := r.OpenChannel(ctx, []byte("ping"))
		if err != nil {
			fromServer <- err.Error()
			return
		}
		got, end := readAll(ctx, ch.Next)
		fromServer <- fmt.Sprintf("%d %q %v", ch.ID(), got, end)
		<-ctx.Done()
	}))
	served := make(chan uint32, 1)
	c := dialClient(t, srv.URL, &wire.ClientOptions{Channels: wire.HandlerFunc(
		func(ctx context.Context, r *wire.Responder, p []byte) {
			served <- r.Channel()
			_ = r.Respond(append([]byte("pong to "), p...))
		})})
	ctx := testContext(t)
	scope, _ := c.Open(ctx, []byte("begin"))
	held, _ := scope.OpenChannel(ctx, []byte("held"))
	if got, err := scope.Next(ctx); err != nil || string(got) != "begun:begin" {
		t.Fatal(got, err)
	}
	if got := receive(t, fromServer); got != `1 ["pong to ping"] EOF` {
		t.Fatalf("server read %s", got)
	}
	if n := receive(t, served); n != 1 || held.ID() != 1 {
		t.Fatalf("server channel %d and client channel %d should both be 1", n, held.ID())
	}
}

// TestServerOpenedChannelNotServed: a client with no channel handler
// answers the server's channels with a bare finish.
func TestServerOpenedChannelNotServed(t *testing.T) {
	fromServer := make(chan error, 1)
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		ch, err := r.OpenChannel(ctx, []byte("ping"))
		if err == nil {
			_, err = ch.Next(ctx)
		}
		fromServer <- err
		<-ctx.Done()
	}))
	c := dialClient(t, srv.URL, nil)
	if _, err := c.Open(testContext(t), []byte("begin")); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, fromServer); err != wire.ErrBareFinish {
		t.Fatalf("server read %v, want ErrBareFinish", err)
	}
}
