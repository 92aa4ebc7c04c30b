package upstream_test

import (
	"testing"

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
