package upstream_test

import (
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/upstream"
)

func TestABackendIsReachedByWhatItsKindNeeds(t *testing.T) {
	for _, c := range []struct {
		name    string
		kind    upstream.Kind
		command []string
		url     string
		key     string // "" when nothing is wrong
	}{
		{"a command", upstream.KindStdio, []string{"server"}, "", ""},
		{"a stdio backend needs a command", upstream.KindStdio, nil, "", "command"},
		{"an empty program is no command", upstream.KindProcess, []string{""}, "", "command"},
		{"an http URL", upstream.KindHTTP, nil, "https://tools.example/mcp", ""},
		{"an http backend needs a URL", upstream.KindSSE, nil, "", "url"},
		{"an http backend needs an http URL", upstream.KindHTTP, nil, "ws://tools.example/", "url"},
		{"a URL needs a host", upstream.KindHTTP, nil, "http:///mcp", "url"},
		{"a URL carries no credentials", upstream.KindHTTP, nil, "https://u:p@tools.example/mcp", "url"},
		{"a proxy URL", upstream.KindProxy, nil, "wss://box:14979", ""},
		{"a proxy needs a ws URL", upstream.KindProxy, nil, "http://box:14979", "url"},
		{"a kind is required", "", nil, "", "kind"},
		{"an unknown kind", "ftp", nil, "ftp://x", "kind"},
	} {
		p := upstream.CheckTarget(c.kind, c.command, c.url)
		switch {
		case c.key == "" && p != nil:
			t.Errorf("%s: refused: %s: %s", c.name, p.Key, p.Why)
		case c.key != "" && (p == nil || p.Key != c.key):
			t.Errorf("%s: %+v, want a problem with %s", c.name, p, c.key)
		}
	}
}

func TestSessionKeysAreCheckedOnceForTheConfigurationAndTheBackends(t *testing.T) {
	for _, c := range []struct {
		name string
		kind upstream.Kind
		mode upstream.SessionMode
		idle time.Duration
		max  int
		key  string
	}{
		{"shared by default", upstream.KindProxy, "", 0, 0, ""},
		{"per-client over http", upstream.KindHTTP, upstream.SessionPerClient, time.Minute, 3, ""},
		{"an unknown mode", upstream.KindStdio, "pooled", 0, 0, "session"},
		{"per-client needs a kind that can", upstream.KindProxy, upstream.SessionPerClient, 0, 0, "session"},
		{"an idle timeout needs per-client", upstream.KindStdio, upstream.SessionShared, time.Minute, 0, "session_idle_timeout"},
		{"a cap needs per-client", upstream.KindStdio, "", 0, 2, "session_max"},
		{"no negative idle timeout", upstream.KindSSE, upstream.SessionPerClient, -time.Second, 0, "session_idle_timeout"},
		{"no negative cap", upstream.KindSSE, upstream.SessionPerClient, 0, -1, "session_max"},
	} {
		p := upstream.CheckSessions(c.kind, c.mode, false, c.idle, c.max)
		switch {
		case c.key == "" && p != nil:
			t.Errorf("%s: refused: %s: %s", c.name, p.Key, p.Why)
		case c.key != "" && (p == nil || p.Key != c.key):
			t.Errorf("%s: %+v, want a problem with %s", c.name, p, c.key)
		}
	}
	for _, c := range []struct{ kind, pattern, key string }{
		{"", "admin_*", ""}, {"tool", "x", ""}, {"ftp", "x", "kind"}, {"prompt", "", "name"}, {"", "[", "name"},
	} {
		if p := upstream.CheckEntryRule(c.kind, c.pattern); (p == nil) != (c.key == "") || p != nil && p.Key != c.key {
			t.Errorf("CheckEntryRule(%q, %q) = %+v, want a problem with %q", c.kind, c.pattern, p, c.key)
		}
	}
}
