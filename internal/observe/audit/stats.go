// stats.go is what a Log reports about itself, for the metrics a user
// alerts on: records lost, writes failing, a queue filling up.

package audit

import "sync/atomic"

// Stats is a snapshot of a Log's counters.
type Stats struct {
	Recorded    uint64 // records Record accepted
	Written     uint64 // records the Writer accepted
	WriteErrors uint64 // failed writes (each is retried)
	Lost        uint64 // accepted records Close gave up on at its deadline
	Unstorable  uint64 // records the store refused for what they hold (store.ErrRefused): logged, never written
	Refused     uint64 // Record calls after Close began
	Blocked     uint64 // Record calls that had to wait for room in a full queue
	Queued      int64  // records accepted and not yet written (or lost)
	MaxQueued   int64  // the most that were ever queued at once
}

// Stats returns the counters now.
func (l *Log) Stats() Stats {
	return Stats{
		Recorded:    l.recorded.Load(),
		Written:     l.written.Load(),
		WriteErrors: l.writeErrors.Load(),
		Lost:        l.lost.Load(),
		Unstorable:  l.unstorable.Load(),
		Refused:     l.refused.Load(),
		Blocked:     l.blocked.Load(),
		Queued:      l.pending.Load(),
		MaxQueued:   l.maxPending.Load(),
	}
}

// counters are the atomics behind Stats.
type counters struct {
	recorded, written, writeErrors, lost, unstorable, refused, blocked atomic.Uint64
	// pending counts a record from just before it enters the queue until
	// it is written or lost, so that it never goes below zero.
	pending, maxPending atomic.Int64
	// woken counts the writer's wake-ups, for a test.
	woken atomic.Uint64
}

// enqueuing counts a record about to enter the queue.
func (c *counters) enqueuing() {
	n := c.pending.Add(1)
	for m := c.maxPending.Load(); n > m && !c.maxPending.CompareAndSwap(m, n); m = c.maxPending.Load() {
	}
}

func (c *counters) wrote(n int) {
	c.written.Add(uint64(n))
	c.pending.Add(-int64(n))
}
