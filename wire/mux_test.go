// mux_test.go runs the multiplexer over real loopback WebSockets: many
// exchanges at once, each answered in its own goroutine, and a slow one —
// a slow handler or a slow reader — never delaying another. (Numbering,
// finishes and server-opened channels have files of their own.)

package wire_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

// echo serves scopes by answering "begun:<payload>" and staying open, and
// channels by answering "<payload>#i" for i < the count the payload asks
// for ("name/3"), one piece at a time.
func echo(ctx context.Context, r *wire.Responder, p []byte) {
	if !r.IsChannel() {
		_ = r.Respond([]byte("begun:" + string(p)))
		<-ctx.Done()
		return
	}
	n := 1
	if i := strings.IndexByte(string(p), '/'); i >= 0 {
		fmt.Sscan(string(p[i+1:]), &n)
	}
	for i := range n {
		_ = r.Respond(fmt.Appendf(nil, "%s#%d", p, i))
	}
}

func openScope(t *testing.T, c *wire.Client, payload string) *wire.Scope {
	t.Helper()
	ctx := testContext(t)
	s, err := c.Open(ctx, []byte(payload))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if got, err := s.Next(ctx); err != nil || string(got) != "begun:"+payload {
		t.Fatalf("scope answer %q, %v", got, err)
	}
	return s
}

// TestManyScopesAndChannelsInterleaved: 8 scopes with 16 channels each,
// all in flight at once, each answered in several pieces; every channel
// gets exactly its own pieces, in order, then its finish.
func TestManyScopesAndChannelsInterleaved(t *testing.T) {
	srv := startServer(t, wire.HandlerFunc(echo))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8*16)
	for s := range 8 {
		wg.Go(func() {
			scope, err := c.Open(ctx, fmt.Appendf(nil, "scope%d", s))
			if err != nil {
				errs <- err
				return
			}
			if got, err := scope.Next(ctx); err != nil || string(got) != fmt.Sprintf("begun:scope%d", s) {
				errs <- fmt.Errorf("scope %d answered %q, %v", s, got, err)
				return
			}
			var inner sync.WaitGroup
			for ch := range 16 {
				inner.Go(func() {
					name := fmt.Sprintf("s%dc%d/%d", s, ch, 1+ch%5)
					channel, err := scope.OpenChannel(ctx, []byte(name))
					if err != nil {
						errs <- err
						return
					}
					got, end := readAll(ctx, channel.Next)
					var want []string
					for i := range 1 + ch%5 {
						want = append(want, fmt.Sprintf("%s#%d", name, i))
					}
					if end != io.EOF || !slices.Equal(got, want) {
						errs <- fmt.Errorf("channel %s: %q then %v", name, got, end)
					}
				})
			}
			inner.Wait()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSlowChannelDoesNotDelayAnother: the slow handler holds its answer
// until the fast channel's answer has been read by the client. If the slow
// one blocked the connection, the fast answer would never come.
func TestSlowChannelDoesNotDelayAnother(t *testing.T) {
	release := make(chan struct{})
	srv := startServer(t, wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		switch {
		case !r.IsChannel():
			echo(ctx, r, p)
		case string(p) == "slow":
			select {
			case <-release:
			case <-ctx.Done():
				return
			}
			_ = r.Respond([]byte("slow answer"))
		default:
			_ = r.Respond([]byte("fast answer"))
		}
	}))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	scope := openScope(t, c, "begin")
	slow, err := scope.OpenChannel(ctx, []byte("slow"))
	if err != nil {
		t.Fatal(err)
	}
	fast, err := scope.OpenChannel(ctx, []byte("fast"))
	if err != nil {
		t.Fatal(err)
	}
	if got, end := readAll(ctx, fast.Next); end != io.EOF || !slices.Equal(got, []string{"fast answer"}) {
		t.Fatalf("fast channel: %q then %v (blocked behind the slow one?)", got, end)
	}
	close(release)
	if got, end := readAll(ctx, slow.Next); end != io.EOF || !slices.Equal(got, []string{"slow answer"}) {
		t.Fatalf("slow channel: %q then %v", got, end)
	}
}

// TestSlowScopeReaderDoesNotDelayAnother: a client that does not read one
// channel's answers does not hold up another channel's.
func TestSlowReaderDoesNotDelayAnother(t *testing.T) {
	srv := startServer(t, wire.HandlerFunc(echo))
	c := dialClient(t, srv.URL, nil)
	ctx := testContext(t)
	scope := openScope(t, c, "begin")
	unread, err := scope.OpenChannel(ctx, []byte("unread/500"))
	if err != nil {
		t.Fatal(err)
	}
	read, err := scope.OpenChannel(ctx, []byte("read/1"))
	if err != nil {
		t.Fatal(err)
	}
	if got, end := readAll(ctx, read.Next); end != io.EOF || len(got) != 1 {
		t.Fatalf("%q then %v", got, end)
	}
	if got, end := readAll(ctx, unread.Next); end != io.EOF || len(got) != 500 {
		t.Fatalf("unread channel: %d pieces then %v", len(got), end)
	}
}
