// backoff.go is how long a backend waits before connecting again: doubling
// while it keeps failing young, so a server that dies at start is not
// hammered, and back to the first step once it stayed up a while, so one
// failure after a long healthy run costs almost nothing.

package backends

import "time"

// Backoff is the reconnection policy of a backend.
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
	b.Max = max(b.Max, b.Base)
	if b.StableAfter <= 0 {
		b.StableAfter = 10 * time.Second
	}
	return b
}

// next is the delay before the next attempt, given the previous delay (0
// if none) and how long the backend was up (0 if it never came up).
func (b Backoff) next(prev, uptime time.Duration) time.Duration {
	if prev <= 0 || uptime >= b.StableAfter {
		return b.Base
	}
	return min(prev*2, b.Max)
}
