// numbering_test.go pins the numbering of scopes and channels: a number is
// never shared by two open exchanges, and is reused after its finish.

package wire_test

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

func TestChannelNumbersReusedAfterFinish(t *testing.T) {
	release := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		if !r.IsChannel() {
			echo(ctx, r, p)
			return
		}
		if held, ok := release[string(p)]; ok {
			select {
			case <-held:
			case <-ctx.Done():
				return
			}
		}
		_ = r.Respond(p)
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	scope := openScope(t, c, "begin")

	first, _ := scope.OpenChannel(ctx, []byte("a"))
	second, _ := scope.OpenChannel(ctx, []byte("b"))
	if first.ID() == second.ID() {
		t.Fatalf("two open channels share number %d", first.ID())
	}
	close(release["a"])
	if _, end := readAll(ctx, first.Next); end != io.EOF {
		t.Fatal(end)
	}
	third, _ := scope.OpenChannel(ctx, []byte("c"))
	if third.ID() != first.ID() {
		t.Fatalf("after its finish, number %d was not reused (got %d)", first.ID(), third.ID())
	}
	close(release["b"])
	for _, ch := range []*wire.Channel{second, third} {
		if _, end := readAll(ctx, ch.Next); end != io.EOF {
			t.Fatal(end)
		}
	}
}

func TestScopeNumbersReusedAfterFinish(t *testing.T) {
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		_ = r.Respond(p) // and return: the scope finishes
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	a, _ := c.Open(ctx, []byte("a"))
	if got, end := readAll(ctx, a.Next); end != io.EOF || !slices.Equal(got, []string{"a"}) {
		t.Fatalf("%q then %v", got, end)
	}
	b, _ := c.Open(ctx, []byte("b"))
	if b.ID() != a.ID() {
		t.Fatalf("scope number %d not reused (got %d)", a.ID(), b.ID())
	}
	if _, end := readAll(ctx, b.Next); end != io.EOF {
		t.Fatal(end)
	}
}
