package main

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/proxytest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// --upstream-era names what the proxy speaks to its upstream; a legacy
// SSE upstream cannot be spoken to sessionless, and an unknown era is
// refused naming the flag.
func TestProxyUpstreamEraFlag(t *testing.T) {
	for _, tc := range []struct {
		flag    string
		kind    upstream.Kind
		want    mcp.Era
		refused string
	}{
		{"auto", upstream.KindHTTP, mcp.EraAuto, ""},
		{"", upstream.KindStdio, mcp.EraAuto, ""},
		{"session", upstream.KindSSE, mcp.EraSession, ""},
		{"sessionless", upstream.KindContract, mcp.EraSessionless, ""},
		{"sessionless", upstream.KindSSE, "", "legacy SSE"},
		{"2026-07-28", upstream.KindHTTP, "", "--upstream-era"},
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

// The Daemon pair listens on loopback only: any other address is refused
// before anything listens.
func TestDaemonListenIsLoopbackOnly(t *testing.T) {
	for _, addr := range []string{":14980", "0.0.0.0:14980", "10.0.0.7:14980", "nonsense"} {
		pf := proxyFlags{daemonListen: addr}
		_, _, err := pf.pairListeners(slog.New(slog.DiscardHandler), &proxy.UpstreamConfig{})
		if err == nil || !strings.Contains(err.Error(), "loopback only") {
			t.Errorf("--daemon-listen %s: %v, want it refused", addr, err)
		}
	}
}

// A stdio program the proxy starts is told where its pairs are
// (MCPGATE_POSTGRES_ADDR, MCPGATE_DAEMON_URL), the addresses the proxy
// printed as it started.
func TestTheProxyTellsItsProgramWhereThePairsAre(t *testing.T) {
	bin := testkit.Mcpgate(t)
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	script := filepath.Join(dir, "program.sh")
	writeText(t, script, "#!/bin/sh\nenv > "+envFile+"\nexec "+bin+" fixture --stdio\n")
	if err := os.Chmod(script, 0o700); err != nil {
		t.Fatal(err)
	}
	base, logs := startProxy(t, bin, nil, "--upstream-command", script,
		"--postgres-listen", "127.0.0.1:0", "--daemon-listen", "127.0.0.1:0", "--info", filepath.Join(dir, "none.md"))
	pg := logs.Await(t, regexp.MustCompile(`the Postgres pair listens at 127\.0\.0\.1:\d+`))
	daemon := logs.Await(t, regexp.MustCompile(`the Daemon pair listens at ws://127\.0\.0\.1:\d+/daemon`))
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

// A proxy that anyone who reaches its port may use says so (at start and
// every hour): beyond loopback with neither TLS nor a token. The addresses
// are only read here, never bound.
func TestAProxyOpenToItsNetworkSaysSo(t *testing.T) {
	for _, tc := range []struct {
		addr       string
		tls, token bool
		open       bool
	}{
		{"[::]:14979", false, false, true},
		{"0.0.0.0:14979", false, false, true},
		{"10.0.0.7:14979", false, false, true},
		{"10.0.0.7:14979", true, false, false},
		{"10.0.0.7:14979", false, true, false},
		{"127.0.0.1:14979", false, false, false},
		{"[::1]:14979", false, false, false},
	} {
		if got := wireIsOpen(tc.addr, tc.tls, tc.token); got != tc.open {
			t.Errorf("wireIsOpen(%s, tls %v, token %v) = %v", tc.addr, tc.tls, tc.token, got)
		}
	}
	for _, want := range []string{"anyone who reaches this port", "--tls-cert", "--client-ca", "--token-file", proxyTokenEnv} {
		if !strings.Contains(openWireWarning, want) {
			t.Errorf("the warning does not say %q", want)
		}
	}
}

// `mcpgate proxy --tls-cert --tls-key --client-ca --token-file` serves
// wss:// and admits a client of the CA with the token, and no one else.
func TestTheProxyServesWSSWithMutualTLSAndAToken(t *testing.T) {
	bin := testkit.Mcpgate(t)
	pki := proxytest.NewPKI(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	writeText(t, tokenFile, "the-wire-token-of-this-test\n")
	base, _ := startProxy(t, bin, nil, "--upstream-command", bin+" fixture --stdio", "--info", filepath.Join(dir, "none.md"),
		"--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey, "--client-ca", pki.CA, "--token-file", tokenFile)
	if !strings.HasPrefix(base, "wss://") {
		t.Fatalf("the proxy serves %s, want wss://", base)
	}
	roots, err := proxy.CertPool(pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(pki.ClientCert, pki.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		token string
		ok    bool
	}{{"the-wire-token-of-this-test", true}, {"", false}, {"not-the-token", false}} {
		o := &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}}
		if tc.token != "" {
			o.HTTPHeader = http.Header{"Authorization": {"Bearer " + tc.token}}
		}
		s, err := wiremcp.Begin(ctx, base, wiremcp.Options{Dial: o})
		if err == nil {
			_ = s.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("a begin with token %q: %v, want admitted %v", tc.token, err, tc.ok)
		}
	}
}
