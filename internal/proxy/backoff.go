// backoff.go is how long the supervisor waits before restarting a stdio
// server that died: doubling while it keeps dying young, so a program that
// crashes at start is not respawned in a tight loop, and back to the first
// step once it has stayed up a while, so one crash after a long, healthy
// run costs almost nothing.

package proxy

import "time"

// Backoff is the restart policy of a supervised program.
type Backoff struct {
	// Base is the first delay (default 100ms).
	Base time.Duration
	// Max caps the delay (default 30s).
	Max time.Duration
	// StableAfter is the uptime after which the delay resets to Base
	// (default 10s).
	StableAfter time.Duration
}

func (b Backoff) withDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = 100 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 30 * time.Second
	}
	if b.Max < b.Base {
		b.Max = b.Base
	}
	if b.StableAfter <= 0 {
		b.StableAfter = 10 * time.Second
	}
	return b
}

// next is the delay before the next start, given the previous delay (0 if
// none) and how long the program ran (0 if it never started).
func (b Backoff) next(prev, uptime time.Duration) time.Duration {
	if prev <= 0 || uptime >= b.StableAfter {
		return b.Base
	}
	return min(prev*2, b.Max)
}
