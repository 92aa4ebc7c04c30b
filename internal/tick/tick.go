// Package tick runs a job every interval until a context ends: the one
// loop behind the gateway's sweeps, refreshes and watches. Sleep is the one
// wait that a channel may cut short.
package tick

import (
	"context"
	"time"
)

// Every calls fn with the tick's time every d, until ctx ends or fn
// returns false. The first call is d after Every is called.
func Every(ctx context.Context, d time.Duration, fn func(now time.Time) bool) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if !fn(now) {
				return
			}
		}
	}
}

// Sleep waits d and reports true, or reports false as soon as stop is
// closed (or receives) first. It is the one wait for a pause that
// something may cut short, and for an event with a time limit (false: it
// came in time).
func Sleep(d time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}
