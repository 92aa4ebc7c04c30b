// wire_backends_test.go pins how the gateway builds its proxy backends'
// secrets: read from its environment and from files when the backend is
// built, a missing one refusing the configuration with its key named, and
// no value ever on /readyz — even when the program refusing them quotes
// them back.

package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/proxytest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func TestProxyBackendSecretMissingNamesTheKey(t *testing.T) {
	testkit.LeakCheck(t)
	missing := filepath.Join(t.TempDir(), "absent")
	for _, c := range []struct{ yaml, key string }{
		{"secrets_from: {TOKEN: MCPGATE_TEST_UNSET_VARIABLE}", "backends[0].secrets_from.TOKEN"},
		{"secret_files: {TOKEN: \"" + missing + "\"}", "backends[0].secret_files.TOKEN"},
	} {
		cfg, err := config.Parse([]byte("listen: 127.0.0.1:0\nauth: {disabled: true}\naudit: {disabled: true}\n" +
			"backends:\n  - {name: p, kind: proxy, url: \"ws://127.0.0.1:1\", " + c.yaml + "}\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = gateway.New(context.Background(), cfg, gateway.Options{Logger: slog.New(slog.DiscardHandler)})
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: New = %v, want an error naming %s", c.yaml, err, c.key)
		}
	}
}

// A program that refuses the secrets and quotes them: /readyz shows the
// refusal with every value cut out.
func TestProxyBackendSecretsNeverOnReadyz(t *testing.T) {
	testkit.LeakCheck(t)
	const fromEnv, fromFile = "env-secret-value-1234", "file-secret-value-5678"
	t.Setenv("MCPGATE_TEST_SECRET", fromEnv)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(fromFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The program: registers anything, refuses the secrets quoting them,
	// and serves the fixture at /mcp.
	var mu sync.Mutex
	var got string
	mux := http.NewServeMux()
	mux.HandleFunc("/register", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "{}") })
	mux.HandleFunc("/secrets", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = string(b)
		mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"kind": "refused", "got": string(b)})
	})
	h := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{})
	mux.Handle("/mcp", h)
	program := httptest.NewServer(mux)
	defer func() { program.Close(); h.Close() }()

	up, err := proxy.NewUpstream(proxy.UpstreamConfig{Kind: upstream.KindContract, URL: program.URL,
		ClientInfo: mcp.Implementation{Name: "p", Version: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(proxy.NewServer(proxy.Options{Upstream: up, InfoPath: filepath.Join(t.TempDir(), "none")}))
	defer func() { px.CloseClientConnections(); px.Close(); _ = up.Close() }()

	base, _ := bkGateway(t, "backends:\n  - name: p\n    kind: proxy\n    url: \"ws"+strings.TrimPrefix(px.URL, "http")+"\"\n"+
		"    arguments: {mode: demo}\n    secrets_from: {TOKEN: MCPGATE_TEST_SECRET}\n    secret_files: {FILE_TOKEN: \""+file+"\"}\n")
	// Down from the start; polled, bounded, until it says why.
	deadline := time.Now().Add(20 * time.Second)
	body, r := bkWaitReady(t, base, http.StatusServiceUnavailable)
	for r.Backends[0].LastError == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		body, r = bkWaitReady(t, base, http.StatusServiceUnavailable)
	}
	if !strings.Contains(body, "secrets refused") {
		t.Errorf("/readyz %s: want the refusal", body)
	}
	if strings.Contains(body, fromEnv) || strings.Contains(body, fromFile) {
		t.Errorf("/readyz shows a secret: %s", body)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(got, fromEnv) || !strings.Contains(got, fromFile) {
		t.Errorf("the program got %q, want both values", got)
	}
}

// A configuration that names several values the gateway cannot read is
// refused once, naming every one (a user fixes them in one go, not one
// run each), and never a value it could read.
func TestEveryMissingValueIsNamedAtOnce(t *testing.T) {
	testkit.LeakCheck(t)
	t.Setenv("MCPGATE_TEST_PRESENT", "present-value-4321")
	missing := filepath.Join(t.TempDir(), "absent")
	cfg, err := config.Parse([]byte("listen: 127.0.0.1:0\nauth: {disabled: true}\naudit: {disabled: true}\nbackends:\n" +
		"  - {name: s, kind: stdio, command: [x], env_from: {A: MCPGATE_TEST_UNSET_A, B: MCPGATE_TEST_PRESENT}, env_files: {C: \"" + missing + "\"}}\n" +
		"  - {name: h, kind: http, url: \"http://127.0.0.1:1/mcp\", headers_from: {Authorization: MCPGATE_TEST_UNSET_H}}\n" +
		"  - {name: p, kind: proxy, url: \"ws://127.0.0.1:1\", secrets_from: {T: MCPGATE_TEST_UNSET_T}, postgres_from: MCPGATE_TEST_UNSET_PG}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = gateway.New(context.Background(), cfg, gateway.Options{Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		t.Fatal("New accepted a configuration whose variables are not set")
	}
	for _, want := range []string{
		"backends[0].env_from.A: environment variable MCPGATE_TEST_UNSET_A is not set",
		"backends[0].env_files.C: open " + missing,
		"backends[1].headers_from.Authorization: environment variable MCPGATE_TEST_UNSET_H is not set",
		"backends[2].postgres_from: environment variable MCPGATE_TEST_UNSET_PG is not set",
		"backends[2].secrets_from.T: environment variable MCPGATE_TEST_UNSET_T is not set",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New's error lacks %q:\n%s", want, err)
		}
	}
	if strings.Contains(err.Error(), "present-value") || strings.Contains(err.Error(), "backends[0].env_from.B") {
		t.Errorf("New's error names a value it could read:\n%s", err)
	}
}

// A proxy backend over wss:// with mutual TLS and a token comes up when
// the gateway holds the proxy's CA, a client certificate of the CA the
// proxy admits, and the token; it stays down, saying why and never the
// token, with a client certificate of another CA or with another token.
func TestAProxyBackendOverWSSWithMutualTLSAndAToken(t *testing.T) {
	testkit.LeakCheck(t)
	pki := proxytest.NewPKI(t)
	const token = "the-wire-token-of-this-test"
	url := proxytest.ServeSecure(t, proxytest.Upstream(t, fixture.New(fixture.Options{})), pki, token)
	dir := t.TempDir()
	write := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, bad := write("token", token), write("other-token", "another-wire-token-of-this-test")
	for _, tc := range []struct {
		name, cert, key, token string
		up                     bool
	}{
		{"the CA's client with the token", pki.ClientCert, pki.ClientKey, good, true},
		{"another CA's client", pki.OtherClientCert, pki.OtherClientKey, good, false},
		{"another token", pki.ClientCert, pki.ClientKey, bad, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, _ := bkGateway(t, fmt.Sprintf("backends:\n  - {name: w, kind: proxy, url: %q, token_file: %q, tls: {ca_file: %q, cert_file: %q, key_file: %q}}\n",
				url, tc.token, pki.CA, tc.cert, tc.key))
			if tc.up {
				bkWaitReady(t, base, http.StatusOK)
				return
			}
			var body string
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				var r bkReadiness
				_, body, r = bkReadyz(t, base)
				if len(r.Backends) == 1 && r.Backends[0].LastError != "" {
					if r.Backends[0].Up {
						t.Fatalf("up: %s", body)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no failure reported: %s", body)
				}
			}
			if strings.Contains(body, "wire-token") {
				t.Errorf("/readyz quotes the token: %s", body)
			}
		})
	}
}
