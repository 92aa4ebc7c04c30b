// gather_test.go pins the server connection from Accept, whose frames may
// be gathered into one write: every frame still arrives as its own
// message, in its order; Answer is one response then the finish; and a
// closing server's close frame is not held back.

package wire_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
)

// startAccepted serves h over connections from wire.Accept, each Serve
// bound to ctx, and waits for them at the test's end.
func startAccepted(t *testing.T, ctx context.Context, h wire.Handler) string {
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := wire.Accept(w, r, nil)
		if err != nil {
			return
		}
		wg.Add(1)
		defer wg.Done()
		_ = wire.ServeAccepted(ctx, a, h, nil)
	}))
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		receive(t, done)
		srv.Close()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// answering begins every scope and answers each channel "n/k" with k
// pieces by Respond, each channel "answer" by Answer.
func answering(ctx context.Context, r *wire.Responder, p []byte) {
	switch {
	case !r.IsChannel():
		_ = r.Respond([]byte("begun"))
		<-ctx.Done()
	case string(p) == "answer":
		_ = r.Answer([]byte("the answer"))
	default:
		var n, k int
		fmt.Sscanf(string(p), "%d/%d", &n, &k)
		for i := range k {
			_ = r.Respond(fmt.Appendf(nil, "%d#%d", n, i))
		}
	}
}

// TestAnswerIsOneResponseThenTheFinish: Answer writes exactly the two
// frames Respond and Finish would, as two messages, and nothing after
// them when the handler returns.
func TestAnswerIsOneResponseThenTheFinish(t *testing.T) {
	for _, accepted := range []bool{true, false} {
		t.Run(fmt.Sprintf("accepted=%v", accepted), func(t *testing.T) {
			var url string
			if accepted {
				url = startAccepted(t, context.Background(), wire.HandlerFunc(answering))
			} else {
				url = startServer(t, wire.HandlerFunc(answering)).URL
			}
			p := dialRaw(t, url)
			p.send(wire.Frame{Type: wire.TypeRequest, Scope: 1})
			p.expect(wire.Frame{Type: wire.TypeResponse, Scope: 1, Payload: []byte("begun")})
			p.send(wire.Frame{Type: wire.TypeChannelRequest, Scope: 1, Channel: 7, Payload: []byte("answer")})
			p.expect(wire.Frame{Type: wire.TypeChannelResponse, Scope: 1, Channel: 7, Payload: []byte("the answer")})
			p.expect(wire.Frame{Type: wire.TypeChannelResponseFinish, Scope: 1, Channel: 7})
			// The number is free again, and the next frame is the next
			// exchange's: no second finish was written.
			p.send(wire.Frame{Type: wire.TypeChannelRequest, Scope: 1, Channel: 7, Payload: []byte("7/1")})
			p.expect(wire.Frame{Type: wire.TypeChannelResponse, Scope: 1, Channel: 7, Payload: []byte("7#0")})
			p.expect(wire.Frame{Type: wire.TypeChannelResponseFinish, Scope: 1, Channel: 7})
		})
	}
}

// TestAnswerAfterTheFinishIsRefused: an exchange is answered once.
func TestAnswerAfterTheFinishIsRefused(t *testing.T) {
	result := make(chan [2]error, 1)
	url := startAccepted(t, context.Background(), wire.HandlerFunc(func(ctx context.Context, r *wire.Responder, p []byte) {
		if !r.IsChannel() {
			answering(ctx, r, p)
			return
		}
		first := r.Answer([]byte("once"))
		result <- [2]error{first, r.Answer([]byte("twice"))}
	}))
	c := dialClient(t, url, nil)
	ctx := testContext(t)
	s, err := c.Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	ch, err := s.OpenChannel(ctx, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	got, end := readAll(ctx, ch.Next)
	if !slices.Equal(got, []string{"once"}) || end != io.EOF {
		t.Fatalf("channel: %q, %v", got, end)
	}
	if errs := receive(t, result); errs[0] != nil || errs[1] != wire.ErrFinished {
		t.Fatalf("Answer twice: %v", errs)
	}
}

// TestGatheredFramesArriveWholeAndInOrder: 64 channels answered at once,
// in several pieces each, over a connection that gathers writes: every
// channel gets exactly its own pieces, in order, then its finish.
func TestGatheredFramesArriveWholeAndInOrder(t *testing.T) {
	url := startAccepted(t, context.Background(), wire.HandlerFunc(answering))
	c := dialClient(t, url, nil)
	ctx := testContext(t)
	s, err := c.Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	const n, pieces = 64, 5
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			for round := range 4 {
				ch, err := s.OpenChannel(ctx, fmt.Appendf(nil, "%d/%d", i, pieces))
				if err != nil {
					errs <- err
					return
				}
				got, end := readAll(ctx, ch.Next)
				want := make([]string, pieces)
				for k := range want {
					want[k] = fmt.Sprintf("%d#%d", i, k)
				}
				if !slices.Equal(got, want) || end != io.EOF {
					errs <- fmt.Errorf("channel %d round %d: %q, %v", i, round, got, end)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestGatheringServerClosesWithItsCloseFrame: a server stopping sends its
// close frame (going away) at once; it is not held for a batch.
func TestGatheringServerClosesWithItsCloseFrame(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := startAccepted(t, ctx, wire.HandlerFunc(answering))
	c := dialClient(t, url, nil)
	tctx := testContext(t)
	s, err := c.Open(tctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(tctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	receive(t, c.Done())
	if err := c.Err(); !errors.Is(err, wire.ErrConnectionClosed) || websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("client's end: %v, want going away", err)
	}
}
