// timeout.go bounds how long a relayed call waits for its backend. A
// backend that never answers used to keep the call open until the client
// gave up; now, after Options.CallTimeout without an answer or a progress
// notification for the call, the caller is answered -32603 with
// data.kind "timeout" and the backend is sent notifications/cancelled
// (mcp.Client does that when the call's context ends).

package relay

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// errCallTimeout is the cause of a call's context when its watchdog fired.
var errCallTimeout = errors.New("relay: the backend did not answer in time")

// watchdog cancels a call's context once it has been quiet for d; kick
// restarts the wait (progress from the backend shows it is working).
type watchdog struct {
	mu    sync.Mutex
	timer *time.Timer
	d     time.Duration
}

// withWatchdog returns ctx ended after d without a kick, and the kick; d
// of 0 or less turns the watchdog off.
func withWatchdog(ctx context.Context, d time.Duration) (context.Context, func(), func()) {
	if d <= 0 {
		return ctx, func() {}, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{d: d}
	w.timer = time.AfterFunc(d, func() { cancel(errCallTimeout) })
	kick := func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.timer.Stop() { // not fired yet: wait d again
			w.timer.Reset(w.d)
		}
	}
	stop := func() {
		w.timer.Stop()
		cancel(nil)
	}
	return ctx, kick, stop
}

// timedOut reports whether ctx ended by its watchdog.
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errCallTimeout)
}

// timeoutError is the caller's answer to a call whose backend went quiet.
func (b *Backend) timeoutError(d time.Duration) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError,
		"backend "+b.name+" did not answer within "+d.String(),
		map[string]string{"backend": b.name, "kind": "timeout", "timeoutSeconds": strconv.FormatFloat(d.Seconds(), 'f', -1, 64)})
}
