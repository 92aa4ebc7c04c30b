package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The backends section: each backend is checked on its own and against the
// others, and a refusal names the key, with the backend's index.
func TestBackendErrorsNameTheKey(t *testing.T) {
	const ok = "  - {name: ok, kind: http, url: \"http://127.0.0.1:1/mcp\"}\n"
	tests := []struct {
		name, yaml, key string
	}{
		{"name missing", "backends: [{kind: http, url: \"http://h/mcp\"}]", "backends[0].name"},
		{"name with a space", "backends: [{name: a b, kind: http, url: \"http://h/mcp\"}]", "backends[0].name"},
		{"names not unique", "backends:\n" + ok + ok, "backends[1].name"},
		{"kind missing", "backends: [{name: a, url: \"http://h/mcp\"}]", "backends[0].kind"},
		{"kind unknown", "backends: [{name: a, kind: grpc, url: \"http://h/mcp\"}]", "backends[0].kind"},
		{"stdio without command", "backends: [{name: a, kind: stdio}]", "backends[0].command"},
		{"stdio with a url", "backends: [{name: a, kind: stdio, command: [x], url: \"http://h/mcp\"}]", "backends[0].url"},
		{"stdio with headers_from", "backends: [{name: a, kind: stdio, command: [x], headers_from: {A: B}}]", "backends[0].headers_from"},
		{"env_from naming nothing", "backends: [{name: a, kind: stdio, command: [x], env_from: {TOKEN: ''}}]", "backends[0].env_from.TOKEN"},
		{"env_from bad variable", "backends: [{name: a, kind: stdio, command: [x], env_from: {'A=B': C}}]", "backends[0].env_from"},
		{"env in clear", "backends: [{name: a, kind: stdio, command: [x], env: {TOKEN: hunter2}}]", "backends[0].env"},
		{"headers in clear", "backends:\n" + ok + "  - {name: b, kind: http, url: \"http://h/mcp\", headers: {Authorization: hunter2}}", "backends[1].headers"},
		{"http without url", "backends:\n" + ok + "  - {name: b, kind: http}", "backends[1].url"},
		{"sse without url", "backends: [{name: a, kind: sse}]", "backends[0].url"},
		{"url not http", "backends: [{name: a, kind: http, url: \"ftp://h/mcp\"}]", "backends[0].url"},
		{"url with credentials", "backends: [{name: a, kind: http, url: \"http://u:p@h/mcp\"}]", "backends[0].url"},
		{"http with a command", "backends: [{name: a, kind: http, url: \"http://h/mcp\", command: [x]}]", "backends[0].command"},
		{"http with env_from", "backends: [{name: a, kind: http, url: \"http://h/mcp\", env_from: {A: B}}]", "backends[0].env_from"},
		{"bad header name", "backends: [{name: a, kind: http, url: \"http://h/mcp\", headers_from: {'X: Y': B}}]", "backends[0].headers_from"},
		{"headers_from naming nothing", "backends: [{name: a, kind: sse, url: \"http://h/sse\", headers_from: {Authorization: ''}}]", "backends[0].headers_from.Authorization"},
		{"unknown min_role", "backends: [{name: a, kind: http, url: \"http://h/mcp\", min_role: boss}]", "backends[0].min_role"},
		{"unknown backend key", "backends: [{name: a, kind: http, url: \"http://h/mcp\", urll: x}]", "backends[0].urll"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("error %q does not name %q", err, tt.key)
			}
			var ke *KeyError
			if errors.As(err, &ke) && ke.Key != tt.key {
				t.Fatalf("KeyError.Key = %q, want %q", ke.Key, tt.key)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error %q repeats a value given in clear", err)
			}
		})
	}
}

func TestBackendsParse(t *testing.T) {
	c, err := Parse([]byte(`
roles: {analyst: viewer}
backends:
  - name: files
    kind: stdio
    command: [npx, -y, "@modelcontextprotocol/server-filesystem", /tmp]
    env_from: {GITHUB_TOKEN: MY_GITHUB_TOKEN}
    prefix: "-"
    min_role: analyst
  - name: remote
    kind: sse
    url: https://mcp.example/sse
    headers_from: {Authorization: REMOTE_AUTH}
    prefix: "r."
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []BackendConfig{
		{Name: "files", Kind: "stdio", Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
			EnvFrom: map[string]string{"GITHUB_TOKEN": "MY_GITHUB_TOKEN"}, Prefix: NoPrefix, MinRole: "analyst"},
		{Name: "remote", Kind: "sse", URL: "https://mcp.example/sse",
			HeadersFrom: map[string]string{"Authorization": "REMOTE_AUTH"}, Prefix: "r."},
	}
	if !reflect.DeepEqual(c.Backends, want) {
		t.Errorf("backends = %+v\nwant %+v", c.Backends, want)
	}
}

func TestBackendFlag(t *testing.T) {
	tests := []struct {
		flag string
		want BackendConfig
		bad  bool
	}{
		{flag: "fx=stdio:mcpgate fixture --stdio", want: BackendConfig{Name: "fx", Kind: "stdio", Command: []string{"mcpgate", "fixture", "--stdio"}}},
		{flag: "r=http:http://127.0.0.1:3000/mcp", want: BackendConfig{Name: "r", Kind: "http", URL: "http://127.0.0.1:3000/mcp"}},
		{flag: "s=sse:https://h/sse", want: BackendConfig{Name: "s", Kind: "sse", URL: "https://h/sse"}},
		{flag: "no-kind", bad: true},
		{flag: "a=http", bad: true},
		{flag: "p=proxy:ws://h:1", want: BackendConfig{Name: "p", Kind: "proxy", URL: "ws://h:1"}},
		{flag: "d=process:mcpgate fixture", want: BackendConfig{Name: "d", Kind: "process", Command: []string{"mcpgate", "fixture"}}},
		{flag: "a=grpc:h:1", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			got, err := ParseBackendFlag(tt.flag)
			if tt.bad {
				if err == nil {
					t.Fatalf("accepted as %+v", got)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("= %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// min_roles: each rule is checked, and a refusal names the rule's key.
func TestBackendMinRolesErrorsNameTheKey(t *testing.T) {
	const head = "roles: {analyst: viewer}\nbackends: [{name: a, kind: http, url: \"http://h/mcp\", min_roles: ["
	const good = "{name: 'x_*', role: editor}, "
	tests := []struct{ name, rules, key string }{
		{"unknown role", good + good + "{name: 'y*', role: boss}", "backends[0].min_roles[2].role"},
		{"role missing", "{name: 'y*'}", "backends[0].min_roles[0].role"},
		{"name missing", good + "{kind: tool, role: admin}", "backends[0].min_roles[1].name"},
		{"bad glob", "{name: 'a[', role: admin}", "backends[0].min_roles[0].name"},
		{"bad kind", "{kind: template, name: '*', role: admin}", "backends[0].min_roles[0].kind"},
		{"unknown rule key", "{name: '*', role: admin, pattern: x}", "backends[0].min_roles[0].pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(head + tt.rules + "]}]"))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("error %q does not name %q", err, tt.key)
			}
			var ke *KeyError
			if errors.As(err, &ke) && ke.Key != tt.key {
				t.Fatalf("KeyError.Key = %q, want %q", ke.Key, tt.key)
			}
		})
	}
}

func TestBackendMinRolesParse(t *testing.T) {
	c, err := Parse([]byte("roles: {analyst: viewer}\nbackends: [{name: a, kind: http, url: \"http://h/mcp\", min_role: editor, min_roles: [" +
		"{kind: tool, name: 'admin_*', role: admin}, {name: '*_any', role: analyst}, {kind: resource, name: 'file:///*', role: viewer}, {kind: prompt, name: '*', role: editor}]}]"))
	if err != nil {
		t.Fatal(err)
	}
	want := []MinRoleRule{
		{Kind: "tool", Name: "admin_*", Role: "admin"},
		{Name: "*_any", Role: "analyst"},
		{Kind: "resource", Name: "file:///*", Role: "viewer"},
		{Kind: "prompt", Name: "*", Role: "editor"},
	}
	if got := c.Backends[0].MinRoles; !reflect.DeepEqual(got, want) {
		t.Fatalf("min_roles = %+v, want %+v", got, want)
	}
}
