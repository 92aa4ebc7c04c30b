// Package tick runs a job every interval until a context ends: the one
// loop behind the gateway's sweeps, refreshes and watches.
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
