package main

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// Calls by turns alternate between the two paths, the first of each turn
// swapped every turn, and what each path's calls gave is kept apart: its
// calls, its errors, its latencies.
func TestCallsByTurnsAlternateAndAreCountedApart(t *testing.T) {
	var (
		mu  sync.Mutex
		log []string
	)
	failed := errors.New("b refused")
	a, b := lockedCaller{"a", &mu, &log, nil}, lockedCaller{"b", &mu, &log, failed}
	sa, sb := alternatingLoop(context.Background(), a, b, 20*time.Millisecond)
	if len(log) < 8 || !slices.Equal(log[:8], []string{"a", "b", "b", "a", "a", "b", "b", "a"}) {
		t.Fatalf("order of calls %v, want a b b a a b b a ...", log[:min(8, len(log))])
	}
	if sa.calls == 0 || sa.errors != 0 || len(sa.lat) != sa.calls {
		t.Errorf("a: %d calls, %d errors, %d latencies", sa.calls, sa.errors, len(sa.lat))
	}
	if sb.calls != 0 || sb.errors == 0 || !errors.Is(sb.firstErr, failed) || len(sb.lat) != 0 {
		t.Errorf("b: %d calls, %d errors (%v), %d latencies", sb.calls, sb.errors, sb.firstErr, len(sb.lat))
	}
	if sb.errors > 101 {
		t.Errorf("b failed %d times: the loop goes on past 100 errors", sb.errors)
	}
}

// lockedCaller notes each call's path in a log every caller shares, under
// a lock: a closed loop calls from several goroutines.
type lockedCaller struct {
	name string
	mu   *sync.Mutex
	log  *[]string
	err  error
}

func (c lockedCaller) call(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.log = append(*c.log, c.name)
	return c.err
}
func (lockedCaller) close(context.Context) {}

// Loops by turns run one path's callers at a time, the paths taking
// turns, and keep what each path's calls gave apart.
func TestLoopsByTurnsTakeTurnsAndAreCountedApart(t *testing.T) {
	var (
		mu  sync.Mutex
		log []string
	)
	failed := errors.New("b refused")
	a := []caller{lockedCaller{"a", &mu, &log, nil}, lockedCaller{"a", &mu, &log, nil}}
	b := []caller{lockedCaller{"b", &mu, &log, failed}, lockedCaller{"b", &mu, &log, failed}}
	sa, sb := turnsLoop(context.Background(), a, b, 40*time.Millisecond, 5*time.Millisecond)
	runs := slices.Compact(slices.Clone(log))
	if len(runs) < 3 || runs[0] != "a" {
		t.Fatalf("turns %v, want a's first, then b's, then a's ...", runs)
	}
	if sa.calls == 0 || sa.errors != 0 || sa.elapsed == 0 {
		t.Errorf("a: %d calls, %d errors in %v", sa.calls, sa.errors, sa.elapsed)
	}
	if sb.calls != 0 || sb.errors == 0 || !errors.Is(sb.firstErr, failed) {
		t.Errorf("b: %d calls, %d errors (%v)", sb.calls, sb.errors, sb.firstErr)
	}
}
