// load.go drives calls. A closed loop has N callers, each calling again as
// soon as its answer arrives. An open loop sends calls at a fixed rate
// whatever the answers do. Its latency is counted from the moment a call
// was due, so that a slow server cannot hide its queue.

package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// caller makes calls on its own session (or channel, or path).
type caller interface {
	call(ctx context.Context) error
	close(ctx context.Context)
}

// sample is what one measured window gave.
type sample struct {
	calls    int
	errors   int
	elapsed  time.Duration
	lat      []time.Duration
	firstErr error
}

func (s *sample) add(o sample) {
	s.calls += o.calls
	s.errors += o.errors
	s.elapsed += o.elapsed
	s.lat = append(s.lat, o.lat...)
	if s.firstErr == nil {
		s.firstErr = o.firstErr
	}
}

// closedLoop runs every caller back to back for d.
func closedLoop(ctx context.Context, callers []caller, d time.Duration) sample {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]sample, len(callers))
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i, c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[i]
			r.lat = make([]time.Duration, 0, 1024)
			for {
				t0 := time.Now()
				if !t0.Before(deadline) {
					return
				}
				if err := c.call(ctx); err != nil {
					r.errors++
					if r.firstErr == nil {
						r.firstErr = err
					}
					if ctx.Err() != nil || r.errors > 100 {
						return
					}
					continue
				}
				r.lat = append(r.lat, time.Since(t0))
				r.calls++
			}
		}()
	}
	wg.Wait()
	total := sample{elapsed: time.Since(start)}
	for _, r := range results {
		r.elapsed = 0
		total.add(r)
	}
	return total
}

// openLoop sends rate calls a second for d on whichever caller is free;
// a call that finds none free waits, and its wait counts in its latency.
func openLoop(ctx context.Context, callers []caller, rate float64, d time.Duration) sample {
	free := make(chan caller, len(callers))
	for _, c := range callers {
		free <- c
	}
	n := int(rate * d.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	var (
		mu  sync.Mutex
		out sample
		wg  sync.WaitGroup
	)
	out.lat = make([]time.Duration, 0, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		due := start.Add(time.Duration(i) * interval)
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait) // pacing the sender, not waiting for a condition
		}
		var c caller
		select {
		case c = <-free:
		case <-ctx.Done():
			return out
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.call(ctx)
			lat := time.Since(due)
			free <- c
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out.errors++
				if out.firstErr == nil {
					out.firstErr = err
				}
				return
			}
			out.calls++
			out.lat = append(out.lat, lat)
		}()
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	return out
}

// stats summarises a sample.
type stats struct {
	Calls       int     `json:"calls"`
	Errors      int     `json:"errors"`
	CallsPerSec float64 `json:"calls_per_sec"`
	P50us       float64 `json:"p50_us"`
	P99us       float64 `json:"p99_us"`
	P999us      float64 `json:"p999_us"`
}

func summarise(s sample) stats {
	st := stats{Calls: s.calls, Errors: s.errors}
	if s.elapsed > 0 {
		st.CallsPerSec = float64(s.calls) / s.elapsed.Seconds()
	}
	if len(s.lat) == 0 {
		return st
	}
	slices.Sort(s.lat)
	q := func(p float64) float64 {
		i := int(p * float64(len(s.lat)-1))
		return float64(s.lat[i].Nanoseconds()) / 1e3
	}
	st.P50us, st.P99us, st.P999us = q(0.50), q(0.99), q(0.999)
	return st
}

func (s stats) String() string {
	return fmt.Sprintf("%.0f calls/s, p50 %.0fµs p99 %.0fµs p99.9 %.0fµs (%d calls, %d errors)",
		s.CallsPerSec, s.P50us, s.P99us, s.P999us, s.Calls, s.Errors)
}

// alternatingLoop runs one caller of each of two paths by turns for d:
// one call to a, one to b, their order swapped each turn, so that both
// see the machine as it is in the same millisecond. Windows run one after
// another see it as it was seconds apart.
func alternatingLoop(ctx context.Context, a, b caller, d time.Duration) (sa, sb sample) {
	sa.lat = make([]time.Duration, 0, 1024)
	sb.lat = make([]time.Duration, 0, 1024)
	start := time.Now()
	deadline := start.Add(d)
	one := func(c caller, s *sample) bool {
		t0 := time.Now()
		if err := c.call(ctx); err != nil {
			s.errors++
			if s.firstErr == nil {
				s.firstErr = err
			}
			return ctx.Err() == nil && s.errors <= 100
		}
		s.lat = append(s.lat, time.Since(t0))
		s.calls++
		return true
	}
	for turn := 0; time.Now().Before(deadline); turn++ {
		first, second, sf, ss := a, b, &sa, &sb
		if turn%2 == 1 {
			first, second, sf, ss = b, a, &sb, &sa
		}
		if !one(first, sf) || !one(second, ss) {
			break
		}
	}
	sa.elapsed = time.Since(start)
	sb.elapsed = sa.elapsed
	return sa, sb
}

// turnsLoop runs the closed loops of two paths by turns for d, each turn
// long: a's callers for one turn, then b's, the order swapped each turn
// as alternatingLoop's is. Two loops compared seconds apart see the
// machine's speed move between them; turns this short do not.
func turnsLoop(ctx context.Context, a, b []caller, d, turn time.Duration) (sa, sb sample) {
	deadline := time.Now().Add(d)
	for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
		first, second, sf, ss := a, b, &sa, &sb
		if i%2 == 1 {
			first, second, sf, ss = b, a, &sb, &sa
		}
		sf.add(closedLoop(ctx, first, turn))
		ss.add(closedLoop(ctx, second, turn))
	}
	return sa, sb
}
