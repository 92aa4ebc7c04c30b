// issuer_test.go pins where a backend's configured credentials may go:
// only to the authorization server the configuration names (token_url,
// or issuer), never to one the backend names itself; and, for the
// authorization code flow, only to the issuer first discovered for the
// backend until an admin forgets the authorization.

package oauthclient_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
)

// selfNamed is a backend that names itself its authorization server, and
// records what its token endpoint was sent.
type selfNamed struct {
	srv  *httptest.Server
	mu   sync.Mutex
	sent []string
}

func newSelfNamed(t *testing.T) *selfNamed {
	t.Helper()
	b := &selfNamed{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, b.srv.URL+"/mcp", b.srv.URL)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":%q}`, b.srv.URL, b.srv.URL+"/token")
		case "/token":
			body, _ := io.ReadAll(r.Body)
			b.mu.Lock()
			b.sent = append(b.sent, r.Header.Get("Authorization")+" "+string(body))
			b.mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func TestABackendNamingItsOwnAuthorizationServerNeverReceivesTheCredential(t *testing.T) {
	is := oauthtest.New(t, "")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, cc := range map[string]oauthclient.ClientCredentials{
		"a client secret":         {ClientID: "gw", ClientSecret: "s3cret-of-the-gateway"},
		"a private key assertion": {ClientID: "gw", AuthMethod: oauthclient.PrivateKeyJWT, PrivateKey: key},
		"a workload assertion":    {Assertion: func() (string, error) { return "the.workload.jwt", nil }},
	} {
		t.Run(name, func(t *testing.T) {
			b := newSelfNamed(t)
			cc.Issuer = is.ID
			_, err := cc.Client(b.srv.Client(), b.srv.URL+"/mcp").Post(b.srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
			if !errors.Is(err, oauthclient.ErrIssuerNotConfigured) || !strings.Contains(err.Error(), is.ID) || !strings.Contains(err.Error(), b.srv.URL) {
				t.Errorf("the request: %v, want a refusal naming %s and %s", err, is.ID, b.srv.URL)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if len(b.sent) != 0 {
				t.Errorf("the backend's token endpoint was sent %q", b.sent)
			}
		})
	}
}

// The authorization code flow signs in at the issuer it first discovered
// for a backend: a backend that comes to name another is refused (no
// link, nothing asked of the new server) until an admin forgets the
// authorization; a configured issuer refuses any other from the start.
func TestAnAuthorizationServerOnceDiscoveredIsPinnedUntilForgotten(t *testing.T) {
	r := newACResource(t)
	other := oauthtest.New(t, "")
	clock := &acClock{t: time.Now()}
	a := acAuthorization(r, &oauthclient.MemoryVault{}, clock)
	get(t, a, r.srv.URL+"/mcp/x")
	if st := a.Status(context.Background()); !strings.HasPrefix(st.Link, r.is.ID) {
		t.Fatalf("the first link: %+v, want one at %s", st, r.is.ID)
	}
	r.mu.Lock()
	r.prm["authorization_servers"] = []string{other.ID}
	r.mu.Unlock()
	clock.add(time.Hour) // the first link expired unused: discovery again
	get(t, a, r.srv.URL+"/mcp/x")
	st := a.Status(context.Background())
	if st.Link != "" || !strings.Contains(st.Failure, "forget the authorization") || !strings.Contains(st.Failure, other.ID) {
		t.Fatalf("after the backend named another server: %+v, want no link and a failure naming it", st)
	}
	if _, err := a.Forget(context.Background()); err != nil {
		t.Fatal(err)
	}
	get(t, a, r.srv.URL+"/mcp/x")
	if st := a.Status(context.Background()); !strings.HasPrefix(st.Link, other.ID) {
		t.Fatalf("after Forget: %+v, want a link at %s", st, other.ID)
	}

	// Configured: the other server is refused before it is asked.
	r2 := newACResource(t)
	r2.prm["authorization_servers"] = []string{other.ID}
	b := acAuthorization(r2, &oauthclient.MemoryVault{}, clock)
	b.Issuer = r2.is.ID
	get(t, b, r2.srv.URL+"/mcp/x")
	if st := b.Status(context.Background()); st.Link != "" || !strings.Contains(st.Failure, "its configuration says") {
		t.Errorf("a backend naming a server its configuration does not: %+v", st)
	}
}
