package main

import (
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/proxy"
)

// --upstream-era names what the proxy speaks to its upstream; a legacy
// SSE upstream cannot be spoken to sessionless, and an unknown era is
// refused naming the flag.
func TestProxyUpstreamEraFlag(t *testing.T) {
	for _, tc := range []struct {
		flag, kind string
		want       mcp.Era
		refused    string
	}{
		{"auto", proxy.KindHTTP, mcp.EraAuto, ""},
		{"", proxy.KindStdio, mcp.EraAuto, ""},
		{"session", proxy.KindSSE, mcp.EraSession, ""},
		{"sessionless", proxy.KindContract, mcp.EraSessionless, ""},
		{"sessionless", proxy.KindSSE, "", "legacy SSE"},
		{"2026-07-28", proxy.KindHTTP, "", "--upstream-era"},
	} {
		got, err := upstreamEra(tc.flag, tc.kind)
		switch {
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("--upstream-era %q on %s: %v, want a refusal naming %q", tc.flag, tc.kind, err, tc.refused)
		case tc.refused == "" && (err != nil || got != tc.want):
			t.Errorf("--upstream-era %q on %s: %q %v, want %q", tc.flag, tc.kind, got, err, tc.want)
		}
	}
}

// The Daemon pair listens on loopback only.
func TestDaemonListenIsLoopbackOnly(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:14980": true, "[::1]:14980": true, "localhost:1": true,
		":14980": false, "0.0.0.0:14980": false, "10.0.0.7:14980": false, "nonsense": false,
	} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
