// order_hub_test.go pins the barrier of order.go at the hub itself: what
// an answer waits for, what it does not wait for, and that a stream nobody
// reads holds answers back only for the grace.

package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

func orderHub(size int, grace time.Duration) *hub {
	h := newHub(size, slog.New(slog.DiscardHandler))
	h.grace = grace
	return h
}

func publishN(t *testing.T, h *hub, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		m, err := jsonrpc.Parse(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":%d}}`, i))
		if err != nil {
			t.Fatal(err)
		}
		h.publish(m)
	}
}

// startAwait runs await in a goroutine; the channel closes when it returns.
func startAwait(ctx context.Context, h *hub, form streamForm) <-chan struct{} {
	seq := h.mark()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.await(ctx, form, seq)
	}()
	return done
}

func returned(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

func waitReturned(t *testing.T, ctx context.Context, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("%s: the answer is still held back", what)
	}
}

// take reads n notifications from st; the last one is still being written.
func take(t *testing.T, ctx context.Context, st *noteStream, n int) []string {
	t.Helper()
	var got []string
	for range n {
		msg, ok, err := st.next(ctx)
		if !ok {
			t.Fatalf("stream ended: %v", err)
		}
		data, _ := jsonrpc.Lookup(msg, "params")
		got = append(got, string(data))
	}
	return got
}

// An answer waits until every framed stream has written every
// notification published before it — the one in hand included — and no
// longer.
func TestAnswerWaitsForTheNotificationsBeforeIt(t *testing.T) {
	ctx := testCtx(t)
	h := orderHub(8, time.Hour)
	defer h.close()
	st := h.openStream(formFramed)
	publishN(t, h, 1, 2)
	done := startAwait(ctx, h, formFramed)
	take(t, ctx, st, 2) // both handed out; the second is not yet written
	if returned(done) {
		t.Fatal("the answer went before the stream wrote the notifications before it")
	}
	publishN(t, h, 3, 3) // after the answer: not waited for
	take(t, ctx, st, 1)  // reports the second written
	waitReturned(t, ctx, done, "after the stream wrote both")
}

// The slow-stream policy is kept: a full stream drops its oldest, and a
// dropped notification counts as done for the barrier.
func TestDroppedNotificationsHoldNoAnswerBack(t *testing.T) {
	ctx := testCtx(t)
	h := orderHub(4, time.Hour)
	defer h.close()
	st := h.openStream(formFramed)
	publishN(t, h, 1, 10)
	done := startAwait(ctx, h, formFramed)
	got := take(t, ctx, st, 4)
	if want := fmt.Sprint([]string{`{"data":7}`, `{"data":8}`, `{"data":9}`, `{"data":10}`}); fmt.Sprint(got) != want {
		t.Errorf("the slow stream kept %v, want the newest %v", got, want)
	}
	if d := h.dropped.Load(); d != 6 {
		t.Errorf("dropped %d, want 6", d)
	}
	if returned(done) {
		t.Fatal("the answer went before the stream wrote the last notification before it")
	}
	if _, _, err := st.next(doneCtx); err == nil { // reports the last one written
		t.Fatal("a notification out of nowhere")
	}
	waitReturned(t, ctx, done, "after the stream wrote what it kept")
}

// A stream nobody reads holds answers back for the grace, then no more
// until it has caught up; then it holds them back again.
func TestStuckStreamHoldsAnswersBackOnlyForTheGrace(t *testing.T) {
	ctx := testCtx(t)
	h := orderHub(4, 10*time.Millisecond)
	defer h.close()
	st := h.openStream(formPath)
	publishN(t, h, 1, 1)
	waitReturned(t, ctx, startAwait(ctx, h, formPath), "a stuck stream")
	h.mu.Lock()
	lagging := st.lagging
	h.mu.Unlock()
	if !lagging {
		t.Fatal("the stuck stream is not marked lagging after the grace")
	}
	take(t, ctx, st, 1)
	if _, _, err := st.next(doneCtx); err == nil {
		t.Fatal("a notification out of nowhere")
	}
	h.mu.Lock()
	lagging = st.lagging
	h.mu.Unlock()
	if lagging {
		t.Fatal("the stream caught up and is still skipped")
	}
	h.grace = time.Hour // the stream counts again
	publishN(t, h, 2, 2)
	done := startAwait(ctx, h, formPath)
	take(t, ctx, st, 1)
	if returned(done) {
		t.Fatal("a stream that caught up no longer holds answers back")
	}
	_, _, _ = st.next(doneCtx)
	waitReturned(t, ctx, done, "after the stream wrote it")
}

// An answer waits only for the streams of its own form, and a stream that
// ends (or the hub's close) releases it.
func TestAnswerWaitsOnlyForStreamsOfItsForm(t *testing.T) {
	ctx := testCtx(t)
	h := orderHub(4, time.Hour)
	stuckPath := h.openStream(formPath)
	defer stuckPath.close()
	framed := h.openStream(formFramed)
	publishN(t, h, 1, 1)
	done := startAwait(ctx, h, formFramed)
	framed.close()
	waitReturned(t, ctx, done, "a framed answer, its stream closed, a path stream stuck")
	done = startAwait(ctx, h, formPath)
	h.close()
	waitReturned(t, ctx, done, "a path answer after the hub closed")
	if _, ok, _ := stuckPath.next(ctx); ok {
		t.Error("a stream gave a notification after the hub closed")
	}
}
