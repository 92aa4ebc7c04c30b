// auth_test.go pins how a proxy closes its wire when it leaves the host: a
// token asked of every request of both forms, compared in constant time;
// wss:// with mutual TLS, refusing a client without a certificate or with
// one of another CA; and the seed's plain form still served when neither
// is configured.

package proxy_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/proxytest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/wire"
	"github.com/mcpgate/mcpgate/wiremcp"
)

const wireToken = "a-wire-token-of-some-length"

// authCtx bounds a test's dials.
func authCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dialStatus is the HTTP status a WebSocket dial of url got (101 when it
// was upgraded), with the handshake's options o.
func dialStatus(t *testing.T, url string, o *websocket.DialOptions) int {
	t.Helper()
	c, resp, err := websocket.Dial(authCtx(t), url, o)
	if err == nil {
		_ = c.CloseNow()
		return http.StatusSwitchingProtocols
	}
	if resp == nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	return resp.StatusCode
}

func TestTheWiresTokenIsAskedOfBothForms(t *testing.T) {
	up := proxytest.Upstream(t, fixture.New(fixture.Options{}))
	ts := httptest.NewServer(proxy.NewServer(proxy.Options{Upstream: up, InfoPath: t.TempDir() + "/none", Token: []byte(wireToken)}))
	t.Cleanup(ts.Close)
	base := "ws" + strings.TrimPrefix(ts.URL, "http")
	for _, path := range []string{"/", wire.PathListTools, wire.PathNotifications} {
		for _, tc := range []struct {
			name, header string
			want         int
		}{
			{"no token", "", http.StatusUnauthorized},
			{"another token", "Bearer not-the-" + wireToken, http.StatusUnauthorized},
			{"a prefix of it", "Bearer " + wireToken[:10], http.StatusUnauthorized},
			{"another scheme", "Basic " + wireToken, http.StatusUnauthorized},
			{"the token", "Bearer " + wireToken, http.StatusSwitchingProtocols},
		} {
			o := &websocket.DialOptions{}
			if tc.header != "" {
				o.HTTPHeader = http.Header{"Authorization": {tc.header}}
			}
			if got := dialStatus(t, base+path, o); got != tc.want {
				t.Errorf("%s with %s: %d, want %d", path, tc.name, got, tc.want)
			}
		}
	}
	// With the token, the framed form is the wire as ever: begun. The
	// framed wire takes one connection at a time, and the probe above
	// holds it until the proxy has seen it close: Begin waits for that.
	var s *wiremcp.Session
	var err error
	testkit.WaitFor(t, "the probe's framed connection let go", func() bool {
		s, err = wiremcp.Begin(authCtx(t), base, wiremcp.Options{Dial: &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + wireToken}}}})
		return err == nil || !strings.Contains(err.Error(), "HTTP 409")
	})
	if err != nil {
		t.Fatalf("begin with the token: %v", err)
	}
	_ = s.Close()
}

// A proxy with neither token nor TLS serves the seed's form as it was.
func TestTheSeedsPlainWireIsServedWhenNothingIsAsked(t *testing.T) {
	up := proxytest.Upstream(t, fixture.New(fixture.Options{}))
	url, _ := proxytest.Serve(t, up, t.TempDir()+"/none")
	s, err := wiremcp.Begin(authCtx(t), url, wiremcp.Options{})
	if err != nil {
		t.Fatalf("a plain begin: %v", err)
	}
	_ = s.Close()
}

func TestMutualTLSAdmitsOnlyTheCAsClients(t *testing.T) {
	pki := proxytest.NewPKI(t)
	up := proxytest.Upstream(t, fixture.New(fixture.Options{}))
	url := proxytest.ServeSecure(t, up, pki, wireToken)
	roots := x509.NewCertPool()
	pem, _ := os.ReadFile(pki.CA)
	roots.AppendCertsFromPEM(pem)
	client := func(certFile, keyFile string) *http.Client {
		cfg := &tls.Config{RootCAs: roots}
		if certFile != "" {
			cert, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		tr := &http.Transport{TLSClientConfig: cfg}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	bearer := http.Header{"Authorization": {"Bearer " + wireToken}}
	begin := func(hc *http.Client, h http.Header) error {
		s, err := wiremcp.Begin(authCtx(t), url, wiremcp.Options{Dial: &websocket.DialOptions{HTTPClient: hc, HTTPHeader: h}})
		if err == nil {
			_ = s.Close()
		}
		return err
	}
	if err := begin(client(pki.ClientCert, pki.ClientKey), bearer); err != nil {
		t.Fatalf("the CA's client with the token: %v", err)
	}
	for name, hc := range map[string]*http.Client{
		"no client certificate":                 client("", ""),
		"a client certificate of another CA":    client(pki.OtherClientCert, pki.OtherClientKey),
		"a client that trusts another CA alone": {Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}},
	} {
		if err := begin(hc, bearer); err == nil {
			t.Errorf("%s: admitted", name)
		}
	}
	if err := begin(client(pki.ClientCert, pki.ClientKey), nil); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("the CA's client without the token: %v, want 401", err)
	}
	var plain *websocket.CloseError
	if _, _, err := websocket.Dial(authCtx(t), strings.Replace(url, "wss://", "ws://", 1), nil); err == nil || errors.As(err, &plain) {
		t.Errorf("plain ws:// to the TLS port: %v, want a failed handshake", err)
	}
}
