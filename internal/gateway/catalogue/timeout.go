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
type watchdog struct {
	abort func(error)
	req   *mcp.Request // aborted when abort is nil
	timer *time.Timer
	d     time.Duration
}

// start arms the watchdog to abort (or, when abort is nil, to abort req),
// unless d (0 or less) turns it off.
func (w *watchdog) start(abort func(error), req *mcp.Request, d time.Duration) {
	if w == nil || d <= 0 || (abort == nil && req == nil) {
		return
	}
	w.abort, w.req, w.d = abort, req, d
	w.timer = time.AfterFunc(d, w.fire)
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
	if w != nil && w.timer != nil {
		w.timer.Stop()
	}
}

func (w *watchdog) resume() {
	if w != nil && w.timer != nil {
		w.timer.Reset(w.d)
	}
}

// kick restarts the wait, unless the watchdog already fired. It is called
// from the backend connection's read loop only, one kick at a time.
func (w *watchdog) kick() {
	if w != nil && w.timer != nil && w.timer.Stop() {
		w.timer.Reset(w.d)
	}
}

// stop disarms the watchdog once the call is over.
func (w *watchdog) stop() {
	if w != nil && w.timer != nil {
		w.timer.Stop()
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
