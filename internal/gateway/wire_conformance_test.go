//go:build unix

// wire_conformance_test.go runs the official conformance suite through the
// gateway over the container wire: the fixture as a process backend — the
// fixture behind the real `mcpgate proxy`, both started by the gateway
// from the built binary — and the suite's own reference server behind a
// process backend and behind a proxy backend (prefix off, so that the
// suite finds the names it calls). Each scores through the wire what it
// scores directly: the wire carries all of MCP (tags 3 to 9, and 12).

package gateway_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/proxytest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
)

// The fixture through a process backend scores what it scores directly,
// check for check; at 2026-07-28, where the wire's session era meets the
// revision, a floor.
func TestConformanceThroughProcessBackend(t *testing.T) {
	testkit.LeakCheck(t)
	bin := testkit.Mcpgate(t)
	fx, _ := bkFixtureHTTP(t, nil)
	direct := rfScore(t, fx)
	// call_timeout: the 2026-07-28 tasks scenarios' 60-second calls are
	// plain calls over the wire (a backend of the 2025 era).
	base, _ := bkGateway(t, "backends:\n  - {name: fixture, kind: process, command: [\""+bin+"\", fixture], proxy_command: [\""+bin+"\", proxy], prefix: \"-\", call_timeout: 3s}\n")
	bkWaitReady(t, base, http.StatusOK)
	through := rfScore(t, base+"/mcp")
	dp, _ := rfPassed(direct)
	p, f := rfPassed(through)
	peers.Score(t, "0.1.16 --suite all: the fixture %d directly, %d passed %d failed through a process backend", dp, p, f)
	rfCompare(t, direct, through)
	// Their notifications reach the gateway before the call's answer, in
	// the program's order (proxy/order.go): they used to pass by timing.
	for _, n := range []string{"tools-call-with-logging", "tools-call-with-progress"} {
		if strings.Contains(through[n], "=FAILURE") || !strings.Contains(through[n], "=SUCCESS") {
			t.Errorf("%s did not pass through a process backend: %s", n, through[n])
		}
	}
	// 2026-07-28 callers through the wire. The proxy speaks 2026-07-28 to
	// the fixture (proxy/sessionless.go); the gateway speaks the session
	// era's exchanges to the proxy and makes of them what it makes of any
	// 2025-era backend (resultType, multi round-trip requests from the
	// server's requests on tag 12). What fails is the tasks extension and
	// the three multi round-trip shapes only a 2026-07-28 backend's own
	// InputRequiredResult gives (see TestConformanceNext2026ThroughTheGateway).
	if testing.Short() {
		return // a second run of the suite, of half a minute
	}
	p26, f26 := cnScoreAt(t, base+"/mcp", "2026-07-28")
	peers.Score(t, "0.2.0-alpha.12 --requirements 2026-07-28: the fixture through a process backend: %d passed, %d failed", p26, f26)
	if p26 < 171 {
		t.Errorf("2026-07-28 through a process backend: %d passed (floor 171)", p26)
	}
}

// The suite's reference server through the wire scores 44/44, as it does
// directly: behind a process backend (the gateway starts it and its
// proxy) and behind a proxy backend (a proxy already running in front of
// it).
func TestReferenceServerScoresTheSameThroughTheWire(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of the conformance suite")
	}
	testkit.LeakCheck(t)
	ref := peers.RequireRefServer(t)
	bin := testkit.Mcpgate(t)
	url := rfStart(t)
	direct := rfScore(t, url)
	if p, f := rfPassed(direct); p != 44 || f != 0 {
		t.Fatalf("the reference server alone scores %d passed, %d failed; want 44/0", p, f)
	}
	program := fmt.Sprintf("cd %q && exec %q --require ./loopback.cjs --import tsx everything-server.ts", ref.Dir, ref.Node22)
	for _, tc := range []struct{ name, backend string }{
		{"process backend", fmt.Sprintf("{name: ref, kind: process, command: [sh, -c, %q], proxy_command: [%q, proxy], prefix: \"-\"}", program, bin)},
		{"proxy backend", fmt.Sprintf("{name: ref, kind: proxy, url: %q, prefix: \"-\"}", rfProxy(t, url))},
		{"proxy backend over wss (mutual TLS, a token)", rfSecureProxy(t, url)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, _ := bkGateway(t, "backends:\n  - "+tc.backend+"\n")
			bkWaitReady(t, base, http.StatusOK)
			through := rfScore(t, base+"/mcp")
			p, f := rfPassed(through)
			peers.Score(t, "0.1.16 --suite all: the reference server through a %s: %d passed, %d failed", tc.name, p, f)
			rfCompare(t, direct, through)
			var failing []string
			for n, s := range through {
				if strings.Contains(s, "=FAILURE") {
					failing = append(failing, n)
				}
			}
			sort.Strings(failing)
			if len(failing) > 0 {
				t.Errorf("failing through the %s: %v", tc.name, failing)
			}
		})
	}
}

// rfSecureProxy serves a real proxy over wss:// with mutual TLS and a
// token in front of the MCP server at url, and returns the backend that
// reaches it: the proxy's CA, the gateway's client certificate, the token
// from a file.
func rfSecureProxy(t *testing.T, url string) string {
	t.Helper()
	up, err := proxy.NewUpstream(proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	pki := proxytest.NewPKI(t)
	const token = "the-wire-token-of-this-test"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("{name: ref, kind: proxy, url: %q, prefix: \"-\", token_file: %q, tls: {ca_file: %q, cert_file: %q, key_file: %q}}",
		proxytest.ServeSecure(t, up, pki, token), tokenFile, pki.CA, pki.ClientCert, pki.ClientKey)
}

// rfProxy serves a real proxy in front of the MCP server at url and
// returns its ws:// URL.
func rfProxy(t *testing.T, url string) string {
	t.Helper()
	up, err := proxy.NewUpstream(proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	ws, _ := proxytest.Serve(t, up, filepath.Join(t.TempDir(), "none"))
	return ws
}
