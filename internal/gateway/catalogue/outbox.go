// outbox.go delivers a backend's notifications about one call (progress,
// log messages) to its caller without ever making the backend wait. They
// arrive on the backend connection's read loop, which also carries every
// other caller's answers. Writing to a front client from there would let
// one client that stops reading stall the whole backend. A stream write
// waits up to its write timeout, then the next one does. So each call in
// flight gets a bounded queue, drained by its own goroutine, started at its
// first notification:
//   - order per call is the backend's, and the call's result waits until
//     the queue is drained, so the caller still sees its notifications
//     before the result;
//   - a full queue drops the new notification (progress and log messages
//     are advisory; the result is not) and the drops are logged when the
//     call ends.

package catalogue

import (
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/mcpgate/mcpgate/mcp"
)

// OutboxSize is how many notifications about one call may wait for a slow
// caller before new ones are dropped.
const OutboxSize = 256

// outbox is one call's queue of notifications to its caller.
type outbox struct {
	mu      sync.Mutex
	q       chan func() // nil until the first notification
	drained chan struct{}
	closed  bool
	dropped int
}

// push queues send, never blocking; it reports false if send was dropped.
func (o *outbox) push(send func()) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	if o.q == nil {
		o.q, o.drained = make(chan func(), OutboxSize), make(chan struct{})
		go func(q <-chan func(), drained chan<- struct{}) {
			defer close(drained)
			for send := range q {
				send()
			}
		}(o.q, o.drained)
	}
	select {
	case o.q <- send:
		return true
	default:
		o.dropped++
		return false
	}
}

// close stops the queue and waits until what it holds was delivered, or
// until stop is closed (the call ended; the drainer then finishes on its
// own, each send bounded by the front transport). It returns the number
// of notifications dropped.
func (o *outbox) close(stop <-chan struct{}) int {
	o.mu.Lock()
	o.closed = true
	q, drained, dropped := o.q, o.drained, o.dropped
	o.mu.Unlock()
	if q == nil {
		return dropped
	}
	close(q)
	select {
	case <-drained:
	case <-stop:
	}
	return dropped
}

// notifyCaller queues a notification of method to c's caller.
func (c *inflightCall) notifyCaller(method string, params json.RawMessage) {
	c.out.push(func() {
		r, _ := c.caller()
		_ = r.Notify(c.ctx, method, params)
	})
}

// logToCaller queues a log message to c's caller; the front session's
// logging/setLevel applies when it is sent.
func (c *inflightCall) logToCaller(level mcp.LogLevel, logger string, data json.RawMessage) {
	c.out.push(func() {
		r, _ := c.caller()
		_ = r.Log(c.ctx, level, logger, data)
	})
}

// finish ends c's outbox (see outbox.close) and logs the drops, if any,
// on log (nil: nowhere).
func (c *inflightCall) finish(log *slog.Logger) {
	if n := c.out.close(c.ctx.Done()); n > 0 && log != nil {
		log.Warn("relay: notifications to a slow caller dropped", "dropped", n, "queue", OutboxSize)
	}
}

// setLogger gives the registry the logger of the Backend it serves.
func (in *Inflight) setLogger(l *slog.Logger) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.log == nil {
		in.log = l
	}
}
