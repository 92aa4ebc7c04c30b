// sessions.go measures what an idle stateful session costs mcpgate serve
// in resident memory: open N sessions (initialize and initialized, then
// nothing), read the process's RSS before and after, divide. It also
// checks that the sessions are held: the first one opened still answers.

package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// sessionMemory is one measurement.
type sessionMemory struct {
	Sessions        int     `json:"sessions"`
	RSSBeforeBytes  int64   `json:"rss_before_bytes"`
	RSSAfterBytes   int64   `json:"rss_after_bytes"`
	BytesPerSession float64 `json:"bytes_per_session"`
	Held            bool    `json:"held"` // the earliest sessions still answer
	MaxSessions     int     `json:"max_sessions"`
}

// measureSessions opens sessions in steps up to each count in counts,
// on a gateway whose cap is above the largest, and reads the RSS at each.
func measureSessions(ctx context.Context, t *target, counts []int, maxSessions int) ([]sessionMemory, error) {
	base, err := rssBytes(t.proc.pid())
	if err != nil {
		return nil, err
	}
	var all []caller
	defer func() {
		for _, c := range all {
			c.close(ctx)
		}
	}()
	var out []sessionMemory
	for _, n := range counts {
		more, err := openMany(ctx, t, n-len(all))
		all = append(all, more...)
		if err != nil {
			return out, err
		}
		rss, err := rssBytes(t.proc.pid())
		if err != nil {
			return out, err
		}
		held := true
		for _, i := range []int{0, len(all) / 2, len(all) - 1} {
			if err := all[i].call(ctx); err != nil {
				held = false
			}
		}
		out = append(out, sessionMemory{Sessions: n, RSSBeforeBytes: base, RSSAfterBytes: rss,
			BytesPerSession: float64(rss-base) / float64(n), Held: held, MaxSessions: maxSessions})
	}
	return out, nil
}

// openMany opens n sessions, 16 at a time.
func openMany(ctx context.Context, t *target, n int) ([]caller, error) {
	out := make([]caller, n)
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				c, err := t.open(ctx)
				if err != nil {
					errOnce.Do(func() { first = fmt.Errorf("session %d: %w", i, err) })
					return
				}
				out[i] = c
			}
		}()
	}
	wg.Wait()
	if first != nil {
		var opened []caller
		for _, c := range out {
			if c != nil {
				opened = append(opened, c)
			}
		}
		return opened, first
	}
	return out, nil
}
