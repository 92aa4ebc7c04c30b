package backends

import (
	"testing"
)

func TestScrubCutsHeaderTokensAndEnvValues(t *testing.T) {
	s := Spec{Header: map[string][]string{"Authorization": {"Bearer abcdef123"}}, Env: []string{"K=envsecret", "SHORT=1"}}
	got := scrub("bad Bearer abcdef123, token abcdef123, env envsecret, 1", s.secrets())
	if want := "bad [redacted], token [redacted], env [redacted], 1"; got != want {
		t.Errorf("scrub = %q, want %q", got, want)
	}
}
