// backoff.go is how long to wait before reaching an upstream server
// again, whether a backend's connection ended or a supervised program
// died. The delay doubles while the server keeps failing young, so one
// that dies at start is not hammered. It goes back to the first step once
// the server stayed up a while, so one failure after a long healthy run
// costs almost nothing.

package upstream

import "time"

// Backoff is the policy for reaching an upstream server again.
type Backoff struct {
	// Base is the first delay (default 100ms).
	Base time.Duration
	// Max caps the delay (default 30s).
	Max time.Duration
	// StableAfter is the uptime after which the delay resets to Base
	// (default 10s).
	StableAfter time.Duration
}

// WithDefaults fills the zero fields with their defaults.
func (b Backoff) WithDefaults() Backoff {
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

// Next is the delay before the next attempt, given the previous delay (0
// if none) and how long the server was up (0 if it never came up).
func (b Backoff) Next(prev, uptime time.Duration) time.Duration {
	if prev <= 0 || uptime >= b.StableAfter {
		return b.Base
	}
	return min(prev*2, b.Max)
}
