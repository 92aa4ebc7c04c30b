package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// turnCaller notes each call's path in a log both callers share.
type turnCaller struct {
	name string
	log  *[]string
	err  error
}

func (c turnCaller) call(context.Context) error { *c.log = append(*c.log, c.name); return c.err }
func (turnCaller) close(context.Context)        {}

// Calls by turns alternate between the two paths, the first of each turn
// swapped every turn, and what each path's calls gave is kept apart: its
// calls, its errors, its latencies.
func TestCallsByTurnsAlternateAndAreCountedApart(t *testing.T) {
	var log []string
	failed := errors.New("b refused")
	a, b := turnCaller{name: "a", log: &log}, turnCaller{name: "b", log: &log, err: failed}
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
