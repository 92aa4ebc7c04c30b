package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/upstream"
)

// The session keys: per-client for the kinds the gateway dials itself,
// with an idle timeout and a cap; refused elsewhere, naming the key.
func TestBackendSessionKeys(t *testing.T) {
	const stdio = `{name: a, kind: stdio, command: [x]`
	const http = `{name: a, kind: http, url: "http://127.0.0.1:1/mcp"`
	tests := []struct {
		name, backend string
		key           string // the key refused; "" when valid
	}{
		{"shared by default", stdio + `}`, ""},
		{"shared explicit", stdio + `, session: shared}`, ""},
		{"per-client stdio", stdio + `, session: per-client, session_idle_timeout: 90s, session_max: 8}`, ""},
		{"per-client http", http + `, session: per-client}`, ""},
		{"per-client sse", `{name: a, kind: sse, url: "http://127.0.0.1:1/sse", session: per-client, session_max: 1}`, ""},
		{"unknown mode", stdio + `, session: pooled}`, "backends[0].session"},
		{"bad duration", stdio + `, session: per-client, session_idle_timeout: soon}`, "backends[0].session_idle_timeout"},
		{"negative duration", stdio + `, session: per-client, session_idle_timeout: -1s}`, "backends[0].session_idle_timeout"},
		{"negative max", http + `, session: per-client, session_max: -2}`, "backends[0].session_max"},
		{"idle timeout when shared", stdio + `, session_idle_timeout: 1m}`, "backends[0].session_idle_timeout"},
		{"max when shared", http + `, session: shared, session_max: 3}`, "backends[0].session_max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantBackendKey(t, tt.backend, tt.key) })
	}
}

// wantBackendKey parses a configuration of one backend and fails unless
// it is accepted (key "") or refused naming key.
func wantBackendKey(t *testing.T, backend, key string) {
	t.Helper()
	wantKey(t, "backends: ["+backend+"]", key)
}

// wantKey parses doc and fails unless it is accepted (key "") or refused
// naming key.
func wantKey(t *testing.T, doc, key string) {
	t.Helper()
	_, err := Parse([]byte(doc))
	if key == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != key {
		t.Fatalf("error %v, want one naming %s", err, key)
	}
}

// Kinds other than stdio, http and sse are refused every session key,
// whatever they are (validateBackendSessions knows only the kinds that
// take them).
func TestSessionKeysRefusedForOtherKinds(t *testing.T) {
	for _, tt := range []struct {
		b   BackendConfig
		key string
	}{
		{BackendConfig{Kind: "proxy", Session: upstream.SessionPerClient}, "backends[2].session"},
		{BackendConfig{Kind: "process", SessionIdleTimeout: Duration{Duration: time.Minute}}, "backends[2].session_idle_timeout"},
		{BackendConfig{Kind: "proxy", SessionMax: 4}, "backends[2].session_max"},
	} {
		err := validateBackendSessions("backends[2]", tt.b)
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != tt.key || !strings.Contains(ke.Msg, string(tt.b.Kind)) {
			t.Errorf("%+v: %v, want %s refused for kind %s", tt.b, err, tt.key, tt.b.Kind)
		}
	}
	if err := validateBackendSessions("backends[0]", BackendConfig{Kind: "proxy"}); err != nil {
		t.Errorf("a proxy backend without session keys: %v", err)
	}
}

// The keys are read as written.
func TestBackendSessionKeysParse(t *testing.T) {
	c, err := Parse([]byte(`backends: [{name: a, kind: stdio, command: [x], session: per-client, session_idle_timeout: 90s, session_max: 8}]`))
	if err != nil {
		t.Fatal(err)
	}
	b := c.Backends[0]
	if b.Session != upstream.SessionPerClient || b.SessionIdleTimeout.Duration != 90*time.Second || b.SessionMax != 8 {
		t.Errorf("parsed %q %v %d", b.Session, b.SessionIdleTimeout.Duration, b.SessionMax)
	}
}

// call_timeout: 5m when unset, 0s for none, and a bad value refused naming
// the key.
func TestBackendCallTimeout(t *testing.T) {
	for _, tt := range []struct {
		set  string
		want time.Duration
		key  string
	}{
		{"", DefaultCallTimeout, ""},
		{", call_timeout: 30s", 30 * time.Second, ""},
		{", call_timeout: 0s", 0, ""},
		{", call_timeout: soon", 0, "backends[0].call_timeout"},
		{", call_timeout: -1s", 0, "backends[0].call_timeout"},
	} {
		c, err := Parse([]byte(`backends: [{name: a, kind: stdio, command: [x]` + tt.set + `}]`))
		if tt.key != "" {
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != tt.key {
				t.Errorf("%q: error %v, want one naming %s", tt.set, err, tt.key)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.set, err)
		}
		if got := c.Backends[0].CallTimeoutOrDefault(); got != tt.want {
			t.Errorf("%q: call timeout %v, want %v", tt.set, got, tt.want)
		}
	}
}
