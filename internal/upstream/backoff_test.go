package upstream

import (
	"testing"
	"time"
)

func TestBackoffDoublesWhileTheServerDiesYoungAndResetsAfterAStableRun(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second, StableAfter: 10 * time.Second}
	for _, c := range []struct {
		name         string
		prev, uptime time.Duration
		want         time.Duration
	}{
		{"first death", 0, time.Second, 100 * time.Millisecond},
		{"died young again", 100 * time.Millisecond, time.Second, 200 * time.Millisecond},
		{"and again", 400 * time.Millisecond, 0, 800 * time.Millisecond},
		{"capped at Max", 800 * time.Millisecond, 0, time.Second},
		{"stays at Max", time.Second, 0, time.Second},
		{"reset after a stable run", time.Second, 10 * time.Second, 100 * time.Millisecond},
	} {
		if got := b.Next(c.prev, c.uptime); got != c.want {
			t.Errorf("%s: Next(%v, %v) = %v, want %v", c.name, c.prev, c.uptime, got, c.want)
		}
	}
	if d := (Backoff{}).WithDefaults(); d.Base <= 0 || d.Max < d.Base || d.StableAfter <= 0 {
		t.Errorf("defaults %+v", d)
	}
}
