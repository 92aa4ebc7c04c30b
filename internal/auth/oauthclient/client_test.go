package oauthclient_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
)

// backendOf is a resource at /mcp whose metadata says prmResource and
// names the issuer; it answers 200 to a request with want as bearer and
// records what it saw.
func backendOf(t *testing.T, prmResource func(base string) string, issuer string, want *atomic.Value) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": prmResource(srv.URL), "authorization_servers": []string{issuer}})
	})
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		want.Store(r.Header.Get("Authorization"))
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// A backend's token endpoint is found from its resource metadata, the
// token is asked for its resource by the client credentials grant, and
// every request carries it; metadata naming another resource is refused.
func TestClientCredentialsFindTheTokenEndpointAndSendTheToken(t *testing.T) {
	is := oauthtest.New(t, "")
	var seen atomic.Value
	be := backendOf(t, func(base string) string { return base + "/mcp" }, is.ID, &seen)
	cc := oauthclient.ClientCredentials{ClientID: "gw", ClientSecret: "s3cret-of-the-gateway", Scopes: []string{"mcp:read"}, Outbound: loopbackAllowed}
	c := cc.Client(be.Client(), be.URL+"/mcp")
	resp, err := c.Post(be.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	got, _ := seen.Load().(string)
	if !strings.HasPrefix(got, "Bearer ") {
		t.Fatalf("the backend saw Authorization %q, want a bearer token", got)
	}
	if g := is.Granted(); g.GrantType != "client_credentials" || g.Resource != be.URL+"/mcp" || g.ClientID != "gw" || g.Scope != "mcp:read" {
		t.Errorf("the token request: %+v", g)
	}

	other := backendOf(t, func(string) string { return "https://elsewhere.example/mcp" }, is.ID, &seen)
	_, err = oauthclient.DiscoverTokenEndpoint(context.Background(), other.Client(), other.URL+"/mcp", "")
	if err == nil || !strings.Contains(err.Error(), "names the resource") {
		t.Errorf("metadata for another resource: %v", err)
	}
	cc.ClientSecret = "wrong-secret-of-the-gateway"
	_, err = cc.Client(be.Client(), be.URL+"/mcp").Post(be.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err == nil || strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("a refused secret: %v (want an error that does not quote it)", err)
	}
}

// privateKeyAS is an authorization server that takes only private_key_jwt
// client assertions signed by pub, and records each one's claims.
type privateKeyAS struct {
	srv    *httptest.Server
	mu     sync.Mutex
	claims []jwt.RegisteredClaims
	forms  []url.Values
}

func newPrivateKeyAS(t *testing.T, pub crypto.PublicKey, alg string) *privateKeyAS {
	t.Helper()
	as := &privateKeyAS{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": as.srv.URL, "token_endpoint": as.srv.URL + "/token",
			"grant_types_supported": []string{"client_credentials"}, "token_endpoint_auth_methods_supported": []string{"private_key_jwt"}})
	})
	n := 0
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		var c jwt.RegisteredClaims
		_, err := jwt.ParseWithClaims(r.PostForm.Get("client_assertion"), &c, func(*jwt.Token) (any, error) { return pub, nil },
			jwt.WithValidMethods([]string{alg}), jwt.WithAudience(as.srv.URL), jwt.WithIssuer("gw"), jwt.WithSubject("gw"), jwt.WithExpirationRequired())
		if err != nil || r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
			return
		}
		as.mu.Lock()
		as.claims, as.forms = append(as.claims, c), append(as.forms, r.PostForm)
		n++
		as.mu.Unlock()
		// A token that expires at once: each request asks for another.
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprint("tok-", n), "token_type": "Bearer", "expires_in": 1})
	})
	as.srv = httptest.NewServer(mux)
	t.Cleanup(as.srv.Close)
	return as
}

// private_key_jwt: the client authenticates with an assertion it signs —
// iss and sub its client_id, aud the discovered issuer, at most a
// minute's life, a jti of its own each time — and sends no secret; a
// server that does not know the key refuses it.
func TestClientCredentialsByPrivateKeyJWT(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	as := newPrivateKeyAS(t, &key.PublicKey, "ES256")
	var seen atomic.Value
	be := backendOf(t, func(base string) string { return base + "/mcp" }, as.srv.URL, &seen)
	cc := oauthclient.ClientCredentials{ClientID: "gw", AuthMethod: oauthclient.PrivateKeyJWT, PrivateKey: key, Outbound: loopbackAllowed}
	c := cc.Client(be.Client(), be.URL+"/mcp")
	for range 2 {
		resp, err := c.Post(be.URL+"/mcp", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got, _ := seen.Load().(string); !strings.HasPrefix(got, "Bearer tok-") {
			t.Fatalf("the backend saw Authorization %q", got)
		}
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	if len(as.claims) < 2 {
		t.Fatalf("%d assertions taken, want one per token (each expired)", len(as.claims))
	}
	if as.claims[0].ID == "" || as.claims[0].ID == as.claims[1].ID {
		t.Errorf("the assertions' jti: %q and %q, want two of their own", as.claims[0].ID, as.claims[1].ID)
	}
	for _, c := range as.claims {
		if life := c.ExpiresAt.Sub(c.IssuedAt.Time); life <= 0 || life > time.Minute {
			t.Errorf("an assertion lives %v", life)
		}
	}
	for _, f := range as.forms {
		if f.Has("client_secret") || f.Get("resource") != be.URL+"/mcp" || f.Get("grant_type") != "client_credentials" {
			t.Errorf("the token request: %v", f)
		}
	}

	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cc.PrivateKey = other
	_, err := cc.Client(be.Client(), be.URL+"/mcp").Post(be.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("an assertion under a key the server does not know: %v", err)
	}
}

// ParsePrivateKey reads the key forms in use and refuses an alg that
// does not suit the key, never quoting the key.
func TestParsePrivateKey(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	pkcs8 := func(k any) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	sec1, _ := x509.MarshalECPrivateKey(ec)
	for _, c := range []struct {
		rule string
		pem  []byte
		alg  string
		ok   bool
	}{
		{"P-256 in PKCS #8 is ES256", pkcs8(ec), "", true},
		{"P-256 in SEC 1", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), "ES256", true},
		{"P-384 is ES384", pkcs8(ec384), "ES384", true},
		{"RSA in PKCS #1", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}), "", true},
		{"RSA with PS256", pkcs8(rsaKey), "PS256", true},
		{"Ed25519 is EdDSA", pkcs8(ed), "", true},
		{"P-256 is not ES384", pkcs8(ec), "ES384", false},
		{"RSA is not ES256", pkcs8(rsaKey), "ES256", false},
		{"no alg called none", pkcs8(ec), "none", false},
		{"an HMAC alg", pkcs8(rsaKey), "HS256", false},
		{"not PEM", []byte("MHcCAQEEI..."), "", false},
		{"PEM of no key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("secret-bytes-here")}), "", false},
	} {
		t.Run(c.rule, func(t *testing.T) {
			k, err := oauthclient.ParsePrivateKey(c.pem, c.alg)
			if (err == nil) != c.ok || (c.ok && k == nil) {
				t.Fatalf("%v, %v; want ok=%v", k, err, c.ok)
			}
			if err != nil && (strings.Contains(err.Error(), "secret-bytes") || strings.Contains(err.Error(), "MHcC")) {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
}

// The JWT-bearer grant (workload identity federation): the token request
// presents the assertion of the moment — read again at each request, as
// a renewed service account token would be — with the client_id and no
// secret; a refusal is surfaced with its error code.
func TestTheJWTBearerGrantPresentsTheWorkloadsToken(t *testing.T) {
	var mu sync.Mutex
	var forms []url.Values
	refuse := false
	mux := http.NewServeMux()
	var as *httptest.Server
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": as.URL, "token_endpoint": as.URL + "/token",
			"grant_types_supported": []string{oauthclient.JWTBearerGrant}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		forms = append(forms, r.PostForm)
		no := refuse
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if no {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"unauthorized_client","error_description":"not for this grant"}`)
			return
		}
		_, _ = io.WriteString(w, `{"access_token":"wif-token","token_type":"Bearer","expires_in":1}`)
	})
	as = httptest.NewServer(mux)
	t.Cleanup(as.Close)
	var seen atomic.Value
	be := backendOf(t, func(base string) string { return base + "/mcp" }, as.URL, &seen)
	current := "workload-jwt-1"
	cc := oauthclient.ClientCredentials{ClientID: "workload", Scopes: []string{"mcp"}, Outbound: loopbackAllowed,
		Assertion: func() (string, error) { mu.Lock(); defer mu.Unlock(); return current, nil }}
	c := cc.Client(be.Client(), be.URL+"/mcp")
	post := func() error {
		resp, err := c.Post(be.URL+"/mcp", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := post(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	current = "workload-jwt-2" // renewed by the platform
	mu.Unlock()
	if err := post(); err != nil {
		t.Fatal(err)
	}
	if got, _ := seen.Load().(string); got != "Bearer wif-token" {
		t.Errorf("the backend saw %q", got)
	}
	mu.Lock()
	if len(forms) != 2 || forms[0].Get("assertion") != "workload-jwt-1" || forms[1].Get("assertion") != "workload-jwt-2" {
		t.Fatalf("the token requests: %v", forms)
	}
	for _, f := range forms {
		if f.Get("grant_type") != oauthclient.JWTBearerGrant || f.Get("client_id") != "workload" || f.Has("client_secret") ||
			f.Get("resource") != be.URL+"/mcp" || f.Get("scope") != "mcp" {
			t.Errorf("a token request: %v", f)
		}
	}
	refuse = true
	mu.Unlock()
	if err := post(); err == nil || !strings.Contains(err.Error(), "unauthorized_client") || strings.Contains(err.Error(), "workload-jwt") {
		t.Errorf("a refused grant: %v (want its error code, never the assertion)", err)
	}
}

// loopbackAllowed is the outbound policy of an operator whose
// authorization servers are on this machine, as the tests' are.
var loopbackAllowed = &egress.Policy{AllowHosts: []string{"127.0.0.1"}}
