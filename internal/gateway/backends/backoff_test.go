package backends

import (
	"testing"
	"time"
)

func TestBackoffDoublesWhileYoungAndResetsWhenStable(t *testing.T) {
	b := Backoff{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond, StableAfter: time.Second}.withDefaults()
	for _, c := range []struct {
		prev, uptime, want time.Duration
	}{
		{0, 0, 10 * time.Millisecond},
		{10 * time.Millisecond, 0, 20 * time.Millisecond},
		{40 * time.Millisecond, 0, 50 * time.Millisecond},
		{50 * time.Millisecond, 0, 50 * time.Millisecond},
		{50 * time.Millisecond, time.Second, 10 * time.Millisecond},
	} {
		if got := b.next(c.prev, c.uptime); got != c.want {
			t.Errorf("next(%v, %v) = %v, want %v", c.prev, c.uptime, got, c.want)
		}
	}
}

func TestScrubCutsHeaderTokensAndEnvValues(t *testing.T) {
	s := Spec{Header: map[string][]string{"Authorization": {"Bearer abcdef123"}}, Env: []string{"K=envsecret", "SHORT=1"}}
	got := scrub("bad Bearer abcdef123, token abcdef123, env envsecret, 1", s.secrets())
	if want := "bad [redacted], token [redacted], env [redacted], 1"; got != want {
		t.Errorf("scrub = %q, want %q", got, want)
	}
}
