package gateway_test

// oauth_test.go holds the gateway as an OAuth protected resource, over
// real HTTP, with a test authorization server (internal/oauthtest) as the
// external issuer: its metadata is served where the MCP specification
// has clients look, every 401 points at it, and only tokens meant for
// the gateway, from the issuer it trusts, get in — beside service tokens.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/oauthtest"
)

const oauthResource = "http://127.0.0.1:8080/mcp"

func TestTheGatewayIsAnOAuthProtectedResource(t *testing.T) {
	is := oauthtest.New(t, "/realm")
	e := gwStart(t, "auth:\n  oauth:\n    resource: "+oauthResource+"\n    authorization_servers: [{issuer: \""+is.ID+"\"}]\n"+
		"    scopes: {mcp:read: viewer, mcp:admin: admin}\n")
	metadataURL := "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"

	t.Run("the metadata at both well-known URLs, without a credential", func(t *testing.T) {
		for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
			rep := e.do(gwRequest{method: http.MethodGet, path: path})
			var md struct {
				Resource               string   `json:"resource"`
				AuthorizationServers   []string `json:"authorization_servers"`
				ScopesSupported        []string `json:"scopes_supported"`
				BearerMethodsSupported []string `json:"bearer_methods_supported"`
			}
			if rep.status != http.StatusOK || json.Unmarshal(rep.body, &md) != nil || md.Resource != oauthResource ||
				len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != is.ID ||
				strings.Join(md.ScopesSupported, " ") != "mcp:admin mcp:read" || md.BearerMethodsSupported[0] != "header" {
				t.Errorf("GET %s: %d %s", path, rep.status, rep.body)
			}
		}
	})
	t.Run("every 401 names the metadata and the scope to ask for", func(t *testing.T) {
		for _, auth := range []string{"", gwBearer("mcpg_unknown"), gwBearer(is.Token(t, map[string]any{"sub": "ann", "aud": "https://other.example/mcp", "scope": "mcp:read"}))} {
			rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: auth, body: gwInitializeBody})
			ch := rep.header.Get("WWW-Authenticate")
			if rep.status != http.StatusUnauthorized || !strings.Contains(ch, `resource_metadata="`+metadataURL+`"`) {
				t.Errorf("auth %.20q: %d %q", auth, rep.status, ch)
			}
		}
		rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", body: gwInitializeBody})
		if ch := rep.header.Get("WWW-Authenticate"); !strings.Contains(ch, `scope="mcp:read"`) || strings.Contains(ch, "invalid_token") {
			t.Errorf("no credential: %q", ch)
		}
	})
	t.Run("an access token meant for the gateway opens a session and calls", func(t *testing.T) {
		tok := is.Token(t, map[string]any{"sub": "ann@idp", "aud": oauthResource, "scope": "openid mcp:read"})
		sid := e.initialize(tok)
		rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(tok), session: sid, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`})
		if rep.status != http.StatusOK || !strings.Contains(string(rep.body), `"tools"`) {
			t.Errorf("tools/list: %d %s", rep.status, rep.body)
		}
	})
	t.Run("a token whose scopes grant no role is 403 insufficient_scope", func(t *testing.T) {
		tok := is.Token(t, map[string]any{"sub": "ann@idp", "aud": oauthResource, "scope": "openid email"})
		rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(tok), body: gwInitializeBody})
		ch := rep.header.Get("WWW-Authenticate")
		if rep.status != http.StatusForbidden || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="mcp:read"`) ||
			!strings.Contains(ch, `resource_metadata="`+metadataURL+`"`) {
			t.Errorf("%d %q", rep.status, ch)
		}
	})
	t.Run("service tokens keep working beside OAuth", func(t *testing.T) {
		secret, _ := e.token("ci", "viewer")
		e.initialize(secret)
	})
	t.Run("admins only on /metrics, by scope", func(t *testing.T) {
		viewer := is.Token(t, map[string]any{"sub": "v", "aud": oauthResource, "scope": "mcp:read"})
		admin := is.Token(t, map[string]any{"sub": "a", "aud": oauthResource, "scope": "mcp:admin"})
		if rep := e.do(gwRequest{method: http.MethodGet, path: "/metrics", auth: gwBearer(viewer)}); rep.status != http.StatusForbidden {
			t.Errorf("a viewer's token on /metrics: %d", rep.status)
		}
		if rep := e.do(gwRequest{method: http.MethodGet, path: "/metrics", auth: gwBearer(admin)}); rep.status != http.StatusOK {
			t.Errorf("an admin's token on /metrics: %d", rep.status)
		}
	})
}

// Without auth.oauth there is no resource metadata: a client learns that
// this server takes no OAuth.
func TestNoResourceMetadataWithoutOAuth(t *testing.T) {
	e := gwStart(t, "")
	if rep := e.do(gwRequest{method: http.MethodGet, path: "/.well-known/oauth-protected-resource"}); rep.status == http.StatusOK {
		t.Errorf("metadata served without auth.oauth: %s", rep.body)
	}
	rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", body: gwInitializeBody})
	if ch := rep.header.Get("WWW-Authenticate"); strings.Contains(ch, "resource_metadata") {
		t.Errorf("a 401 without OAuth names metadata: %q", ch)
	}
}
