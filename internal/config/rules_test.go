package config

import "testing"

// The policy's rules are compiled when the configuration loads: one that
// does not compile is refused, naming its key and where in it.
func TestPolicyRulesAreCompiledWhenTheConfigurationLoads(t *testing.T) {
	wantKey(t, "policy:\n  rules:\n    - {name: ok, match: 'principal.role == \"viewer\"', deny_unless: 'request.arguments.path.startsWith(\"/srv/\")'}\n", "")
	wantKey(t, "policy:\n  rules:\n    - {name: ok, deny_unless: 'true'}\n    - {name: broken, deny_unless: 'principal.role =='}\n", "policy.rules[1].deny_unless")
	wantKey(t, "policy:\n  rules:\n    - {name: nomatch, match: 'request.nope(', deny_unless: 'true'}\n", "policy.rules[0].match")
}

// An interceptor is a webhook or the redactor, its keys checked when the
// configuration loads, naming the one refused.
func TestInterceptorKeys(t *testing.T) {
	for _, c := range []struct{ name, doc, key string }{
		{"a webhook", `{name: dlp, url: "https://dlp.internal/hook", on: [request], match: 'request.backend == "files"', mode: mutate, timeout: 500ms, fail: open}`, ""},
		{"the redactor", `{name: secrets, builtin: redact, patterns: {ticket: 'TICKET-[0-9]+'}}`, ""},
		{"an MCP server's tool", `{name: check, url: "http://127.0.0.1:9/mcp", tool: check}`, ""},
		{"a tool without its server", `{name: check, tool: check}`, "interceptors[0]"},
		{"kind mcp", `{name: check, kind: mcp, url: "http://127.0.0.1:9/mcp", tool: check}`, ""},
		{"kind mcp without a tool", `{name: check, kind: mcp, url: "http://127.0.0.1:9/mcp"}`, "interceptors[0].tool"},
		{"a webhook with a tool", `{name: check, kind: webhook, url: "http://127.0.0.1:9/mcp", tool: check}`, "interceptors[0].tool"},
		{"another kind", `{name: check, kind: grpc, url: "http://127.0.0.1:9/x"}`, "interceptors[0].kind"},
		{"no name", `{url: "https://h/x"}`, "interceptors[0].name"},
		{"neither url nor builtin", `{name: a}`, "interceptors[0]"},
		{"both", `{name: a, url: "https://h/x", builtin: redact}`, "interceptors[0]"},
		{"another builtin", `{name: a, builtin: antivirus}`, "interceptors[0].builtin"},
		{"a mode", `{name: a, url: "https://h/x", mode: rewrite}`, "interceptors[0].mode"},
		{"a fail", `{name: a, url: "https://h/x", fail: maybe}`, "interceptors[0].fail"},
		{"a phase", `{name: a, url: "https://h/x", on: [before]}`, "interceptors[0].on[0]"},
		{"not http", `{name: a, url: "ftp://h/x"}`, "interceptors[0].url"},
		{"a webhook's patterns", `{name: a, url: "https://h/x", patterns: {p: x}}`, "interceptors[0].patterns"},
		{"a bad match", `{name: a, url: "https://h/x", match: 'request.entry =='}`, "interceptors"},
		{"a bad pattern", `{name: a, builtin: redact, patterns: {p: '(x'}}`, "interceptors"},
	} {
		t.Run(c.name, func(t *testing.T) { wantKey(t, "interceptors:\n  - "+c.doc+"\n", c.key) })
	}
	wantKey(t, "interceptors:\n  - {name: a, builtin: redact}\n  - {name: a, builtin: redact}\n", "interceptors[1].name")
}
