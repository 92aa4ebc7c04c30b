package config

import "testing"

// The era key: auto, session or sessionless; sessionless only where the
// gateway can speak 2026-07-28 (stdio and http), refused naming the key.
func TestBackendEraKey(t *testing.T) {
	tests := []struct {
		name, backend string
		key           string // the key refused; "" when valid
	}{
		{"auto by default", `{name: a, kind: stdio, command: [x]}`, ""},
		{"auto", `{name: a, kind: http, url: "http://127.0.0.1:1/mcp", era: auto}`, ""},
		{"session on sse", `{name: a, kind: sse, url: "http://127.0.0.1:1/sse", era: session}`, ""},
		{"sessionless on stdio", `{name: a, kind: stdio, command: [x], era: sessionless}`, ""},
		{"sessionless on http", `{name: a, kind: http, url: "http://127.0.0.1:1/mcp", era: sessionless}`, ""},
		{"sessionless on sse", `{name: a, kind: sse, url: "http://127.0.0.1:1/sse", era: sessionless}`, "backends[0].era"},
		{"an unknown era", `{name: a, kind: stdio, command: [x], era: "2026"}`, "backends[0].era"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantBackendKey(t, tt.backend, tt.key) })
	}
}
