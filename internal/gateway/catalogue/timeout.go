// timeout.go bounds how long a relayed call waits for its backend. A
// backend that never answers used to keep the call open until the client
// gave up. Now the call may go Options.CallTimeout without an answer or a
// progress notification. The caller is then answered -32603 with data.kind
// "timeout", and the backend is sent notifications/cancelled (mcp.Client
// does that when the call's context ends).

package catalogue

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// errCallTimeout is the cause of a call's context when its watchdog fired.
var errCallTimeout = errors.New("relay: the backend did not answer in time")

// watchdog aborts a call once it has been quiet for d; kick restarts the
// wait (progress from the backend shows it is working). For a call made for
// a session's caller the request's own context is ended
// (mcp.Request.Abort). No context of its own is so made for every relayed
// call. A 2026-07-28 caller's call outlives its request, and its own
// context is ended (park.go).
//
// A watchdog holds no timer of its own: it keeps a deadline, and its
// registry's one sweep (Inflight.sweep) fires those past theirs. A timer
// per call cost two allocations and a timer-heap insertion and removal on
// every relayed call; a kick is now one atomic store. A call so ends
// between d and d plus a sweep's tick (d/16, 10ms to 1s) of quiet.
type watchdog struct {
	in    *Inflight // whose sweep fires it
	abort func(error)
	req   *mcp.Request // aborted when abort is nil
	d     time.Duration
	// deadline is when the call has been quiet too long, on the clock of
	// now; 0 while the watchdog is off, paused, stopped or fired.
	deadline atomic.Int64
}

// epoch anchors now: a monotonic clock in nanoseconds, never 0 after it.
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) }

// start arms the watchdog to abort (or, when abort is nil, to abort req),
// unless d (0 or less) turns it off. in.mu is held.
func (w *watchdog) start(in *Inflight, abort func(error), req *mcp.Request, d time.Duration) {
	if w == nil || d <= 0 || (abort == nil && req == nil) {
		return
	}
	w.in, w.abort, w.req, w.d = in, abort, req, d
	w.deadline.Store(now() + int64(d))
	in.sweepFor(d)
}

func (w *watchdog) fire() {
	if w.abort != nil {
		w.abort(errCallTimeout)
		return
	}
	w.req.Abort(errCallTimeout)
}

// pause stops the wait while the call waits for its caller, not its
// backend (a parked call); resume starts it afresh. Both are called by the
// call's one waiter, in turn.
func (w *watchdog) pause() {
	if w != nil {
		w.deadline.Store(0)
	}
}

func (w *watchdog) resume() {
	if w == nil || w.in == nil {
		return
	}
	w.in.mu.Lock()
	w.deadline.Store(now() + int64(w.d))
	w.in.sweepFor(w.d)
	w.in.mu.Unlock()
}

// kick restarts the wait, unless the watchdog is not armed (it fired, or
// is paused or stopped). It is called from the backend connection's read
// loop only, one kick at a time.
func (w *watchdog) kick() {
	if w == nil {
		return
	}
	if dl := w.deadline.Load(); dl != 0 {
		w.deadline.CompareAndSwap(dl, now()+int64(w.d)) // lost to a sweep that fired it: so be it
	}
}

// stop disarms the watchdog once the call is over.
func (w *watchdog) stop() {
	if w != nil {
		w.deadline.Store(0)
	}
}

// sweepFor makes sure the registry's sweep runs, often enough for a
// watchdog of d. in.mu is held.
func (in *Inflight) sweepFor(d time.Duration) {
	tick := min(max(d/16, 10*time.Millisecond), time.Second)
	if in.tick == 0 || tick < in.tick {
		in.tick = tick
	}
	if in.sweeping {
		return
	}
	in.sweeping = true
	if in.sweeper == nil {
		in.sweeper = time.AfterFunc(in.tick, in.sweep)
		return
	}
	in.sweeper.Reset(in.tick)
}

// sweep fires the watchdogs past their deadlines, and runs again after a
// tick while any other is armed.
func (in *Inflight) sweep() {
	t := now()
	var due []*watchdog
	in.mu.Lock()
	armed := false
	for _, c := range in.calls {
		w := &c.watchdog
		switch dl := w.deadline.Load(); {
		case dl == 0:
		case dl <= t && w.deadline.CompareAndSwap(dl, 0):
			due = append(due, w)
		default:
			armed = true
		}
	}
	if armed {
		in.sweeper.Reset(in.tick)
	} else {
		in.sweeping = false
	}
	in.mu.Unlock()
	for _, w := range due {
		w.fire()
	}
}

// timedOut reports whether ctx ended by its watchdog.
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errCallTimeout)
}

// timeoutError is the caller's answer to a call whose backend went quiet.
func (b *Mirror) timeoutError(d time.Duration) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError,
		"backend "+b.name+" did not answer within "+d.String(),
		map[string]string{"backend": b.name, "kind": string(mcp.KindTimeout), "timeoutSeconds": strconv.FormatFloat(d.Seconds(), 'f', -1, 64)})
}
