package oauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/oauth"
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
	cc := oauth.ClientCredentials{ClientID: "gw", ClientSecret: "s3cret-of-the-gateway", Scopes: []string{"mcp:read"}}
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
	_, err = oauth.DiscoverTokenEndpoint(context.Background(), other.Client(), other.URL+"/mcp")
	if err == nil || !strings.Contains(err.Error(), "names the resource") {
		t.Errorf("metadata for another resource: %v", err)
	}
	cc.ClientSecret = "wrong-secret-of-the-gateway"
	_, err = cc.Client(be.Client(), be.URL+"/mcp").Post(be.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err == nil || strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("a refused secret: %v (want an error that does not quote it)", err)
	}
}
