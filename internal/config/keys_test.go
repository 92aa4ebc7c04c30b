// keys_test.go pins how a configuration's mistakes are reported: by the
// key path a user wrote, with what was expected, never in Go's terms.

package config

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigurationMistakesNameTheKeyAndWhatWasExpected(t *testing.T) {
	for _, c := range []struct {
		rule, yaml, key, says string
	}{
		{"a misspelt backend key", "backends:\n  - name: a\n    kind: stdio\n    comand: [x]\n", "backends[0].comand", "did you mean command?"},
		{"a command given as a string", "backends:\n  - name: a\n    kind: stdio\n    command: mcpgate fixture --stdio\n", "backends[0].command", "expected a list — one item each, e.g. [mcpgate, fixture, --stdio]"},
		{"a misspelt top-level key", "lisen: 127.0.0.1:1\n", "lisen", "did you mean listen?"},
		{"a word for a number", "http:\n  max_sessions: many\n", "http.max_sessions", `expected a whole number, got "many"`},
		{"a word for a boolean", "audit:\n  disabled: nope\n", "audit.disabled", `expected true or false, got "nope"`},
		{"a list for a mapping", "rate_limits:\n  - rate: 1\n", "rate_limits", "expected a mapping"},
		{"a mapping for a string", "listen: {host: x}\n", "listen", "expected a string, got a mapping"},
		{"a key inside a map of structs", "rate_limits:\n  roles:\n    viewer: {rate: 1, brust: 2}\n", "rate_limits.roles.viewer.brust", "did you mean burst?"},
		{"a key of an inline struct", "rate_limits:\n  entries:\n    - {name: x, rate: 1, burst: 1, per_entri: true}\n", "rate_limits.entries[0].per_entri", "did you mean per_entry?"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != c.key || !strings.Contains(ke.Msg, c.says) {
				t.Fatalf("got %v; want key %s saying %q", err, c.key, c.says)
			}
			if strings.Contains(err.Error(), "config.") || strings.Contains(err.Error(), "!!") {
				t.Errorf("the error speaks Go or YAML internals: %v", err)
			}
		})
	}
	// What the checker lets through, the decoder reads as before.
	if _, err := Parse([]byte("backends:\n  - {name: a, kind: stdio, command: [x], env_from: {A: B}}\nhttp: {max_sessions: 5, session_idle_timeout: 1m}\n")); err != nil {
		t.Fatal(err)
	}
}
