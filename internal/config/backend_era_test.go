package config

import "testing"

// The era key: auto, session or sessionless; sessionless only where
// 2026-07-28 can be spoken (stdio and http by the gateway, a process
// backend's program by its proxy), and no era for a running proxy, whose
// era is its own; refused naming the key.
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
		{"sessionless on process", `{name: a, kind: process, command: [x], era: sessionless}`, ""},
		{"session on process", `{name: a, kind: process, command: [x], era: session}`, ""},
		{"session on proxy", `{name: a, kind: proxy, url: "ws://127.0.0.1:1/", era: session}`, "backends[0].era"},
		{"auto on proxy", `{name: a, kind: proxy, url: "ws://127.0.0.1:1/", era: auto}`, ""},
		{"an unknown era", `{name: a, kind: stdio, command: [x], era: "2026"}`, "backends[0].era"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantBackendKey(t, tt.backend, tt.key) })
	}
}
