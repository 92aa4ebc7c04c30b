// workers_test.go pins the kept handler goroutines: an exchange served
// after others have ended still runs on its own, so a held exchange never
// delays the next, and every kept goroutine ends with the connection (the
// leak check in TestMain).

package wire_test

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

func TestKeptWorkersServeEachExchangeOnItsOwn(t *testing.T) {
	release := make(chan struct{})
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		switch {
		case !r.IsChannel():
			echo(ctx, r, p)
		case string(p) == "hold":
			select {
			case <-release:
			case <-ctx.Done():
			}
			_ = r.Answer([]byte("released"))
		default:
			_ = r.Answer(p)
		}
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	s := openScope(t, c, "begin")
	call := func(p string) *wire.Channel {
		t.Helper()
		ch, err := s.OpenChannel(ctx, []byte(p))
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	for range 8 { // goroutines are idle now, kept for the next exchanges
		if got, end := readAll(ctx, call("x").Next); !slices.Equal(got, []string{"x"}) || end != io.EOF {
			t.Fatalf("answer %q, %v", got, end)
		}
	}
	held := call("hold")
	for range 8 {
		if got, end := readAll(ctx, call("y").Next); !slices.Equal(got, []string{"y"}) || end != io.EOF {
			t.Fatalf("beside a held exchange: %q, %v", got, end)
		}
	}
	close(release)
	if got, end := readAll(ctx, held.Next); !slices.Equal(got, []string{"released"}) || end != io.EOF {
		t.Fatalf("held: %q, %v", got, end)
	}
}
