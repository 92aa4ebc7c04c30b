package main

import (
	"os"
	"path/filepath"
	"regexp"
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

// A stdio program the proxy starts is told where its pairs are
// (MCPGATE_POSTGRES_ADDR, MCPGATE_DAEMON_URL), the addresses the proxy
// printed as it started.
func TestTheProxyTellsItsProgramWhereThePairsAre(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	script := filepath.Join(dir, "program.sh")
	writeText(t, script, "#!/bin/sh\nenv > "+envFile+"\nexec "+bin+" fixture --stdio\n")
	if err := os.Chmod(script, 0o700); err != nil {
		t.Fatal(err)
	}
	base, logs := startProxy(t, bin, nil, "--upstream-command", script,
		"--postgres-listen", "127.0.0.1:0", "--daemon-listen", "127.0.0.1:0", "--info", filepath.Join(dir, "none.md"))
	pg := logs.waitFor(t, regexp.MustCompile(`the Postgres pair listens at 127\.0\.0\.1:\d+`))
	daemon := logs.waitFor(t, regexp.MustCompile(`the Daemon pair listens at ws://127\.0\.0\.1:\d+/daemon`))
	runCall(t, bin, exitAnswered, base, "tools/list") // the program starts with the first exchange
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	env := string(b)
	if want := "MCPGATE_POSTGRES_ADDR=" + strings.TrimPrefix(pg, "the Postgres pair listens at "); !strings.Contains(env, want+"\n") {
		t.Errorf("the program's environment lacks %s", want)
	}
	if want := "MCPGATE_DAEMON_URL=" + strings.TrimPrefix(daemon, "the Daemon pair listens at "); !strings.Contains(env, want+"\n") {
		t.Errorf("the program's environment lacks %s", want)
	}
}
