package gateway_test

// oauth_test.go holds the gateway as an OAuth protected resource, over
// real HTTP, with a test authorization server (internal/oauthtest) as the
// external issuer: its metadata is served where the MCP specification
// has clients look, every 401 points at it, and only tokens meant for
// the gateway, from the issuer it trusts, get in — beside service tokens.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
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

// The built-in authorization server behind the gateway: the resource
// metadata names it, a client registers and a person signs in with a
// service token, the access token opens a session with the role granted,
// and an admin revoking the grant in the console ends the token at once,
// audited under the admin's name.
// builtinGrant registers a client named name at the gateway's built-in
// server, signs in with the service token secret for scope, and redeems
// the code: a grant, and its tokens.
func builtinGrant(t *testing.T, e *gwEnv, secret, name, scope string) (tok struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
}) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": []string{"http://127.0.0.1:9/cb"}})
	rep := e.do(gwRequest{method: http.MethodPost, path: "/oauth/register", body: string(body)})
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if rep.status != http.StatusCreated || json.Unmarshal(rep.body, &reg) != nil {
		t.Fatalf("register: %d %s", rep.status, rep.body)
	}
	const verifier = "a-verifier-of-forty-three-characters-or-more-0123456789"
	sum := sha256.Sum256([]byte(verifier))
	form := url.Values{"client_id": {reg.ClientID}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "response_type": {"code"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {oauthResource}, "scope": {scope}, "state": {"s1"}, "token": {secret}, "decision": {"allow"}}
	resp, _ := adminDo(t, e, "POST", "/oauth/authorize", form, map[string]string{"Origin": e.base})
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc.Query().Get("code") == "" {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, answer := adminDo(t, e, "POST", "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"client_id": {reg.ClientID}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "code_verifier": {verifier}}, nil)
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(answer), &tok) != nil {
		t.Fatalf("token: %d %s", resp.StatusCode, answer)
	}
	return tok
}

func TestTheBuiltinAuthorizationServerBehindTheGateway(t *testing.T) {
	e := gwStart(t, "auth:\n  oauth:\n    resource: "+oauthResource+"\n    builtin: true\n")
	admin, _ := e.token("ops", "admin")
	editor, editorID := e.token("ada", "editor")
	const issuer = "http://127.0.0.1:8080"
	rep := e.do(gwRequest{method: http.MethodGet, path: "/.well-known/oauth-protected-resource/mcp"})
	if !strings.Contains(string(rep.body), `"authorization_servers":["`+issuer+`"]`) || !strings.Contains(string(rep.body), `"scopes_supported":["admin","editor","viewer"]`) {
		t.Fatalf("the resource metadata: %s", rep.body)
	}
	rep = e.do(gwRequest{method: http.MethodGet, path: "/.well-known/oauth-authorization-server"})
	if rep.status != http.StatusOK || !strings.Contains(string(rep.body), `"issuer":"`+issuer+`"`) {
		t.Fatalf("the authorization server metadata: %d %s", rep.status, rep.body)
	}
	tok := builtinGrant(t, e, editor, "Claude <desktop>", "editor")
	sid := e.initialize(tok.AccessToken)
	rep = e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(tok.AccessToken), session: sid, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`})
	if rep.status != http.StatusOK || !strings.Contains(string(rep.body), `"tools"`) {
		t.Fatalf("tools/list with the access token: %d %s", rep.status, rep.body)
	}

	cookie := adminLogin(t, e, admin)
	resp, page := adminDo(t, e, "GET", "/admin/tokens", nil, map[string]string{"Cookie": cookie})
	m := regexp.MustCompile(`<tr data-grant="([^"]+)"><td class="mono">[^<]+</td><td>ada</td><td>editor</td><td>Claude &lt;desktop&gt;</td><td class="mono">` + editorID).FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("the console shows no grant of ada's (escaped):\n%s", page)
	}
	csrf := adminCSRF.FindStringSubmatch(page)[1]
	resp, _ = adminDo(t, e, "POST", "/admin/grants/revoke", url.Values{"csrf": {csrf}, "id": {m[1]}}, map[string]string{"Cookie": cookie, "Origin": e.base})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke in the console: %d", resp.StatusCode)
	}
	if rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(tok.AccessToken), body: gwInitializeBody}); rep.status != http.StatusUnauthorized {
		t.Errorf("the access token of a revoked grant: %d, want 401 at once", rep.status)
	}
	if err := e.closeGateway(context.Background()); err != nil { // flushes the audit log
		t.Fatal(err)
	}
	records, err := e.store.TailAudit(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range records {
		if r.Kind == "oauth" && r.Name == "revoke" && r.Subject == "ops" && r.TokenID == m[1] {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit record of ops revoking %s: %+v", m[1], records)
	}
}

// The built-in server on a shared PostgreSQL store without a session key
// signs with a key of its own process, which the other replicas do not
// hold: the gateway says so at start, and says nothing with a key.
func TestTheBuiltinServerOnASharedStoreWithoutASessionKeyIsNamed(t *testing.T) {
	for _, withKey := range []bool{false, true} {
		if withKey {
			t.Setenv("MCPGATE_SESSION_KEY", strings.Repeat("ab", 32))
		}
		cfg, err := config.Parse([]byte("auth:\n  oauth:\n    resource: " + oauthResource + "\n    builtin: true\n"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Store = "postgres://mcpgate@127.0.0.1:1/mcpgate" // as replicas name it; the store itself is the test's
		st, err := sqlite.Open(testkit.Context(t), filepath.Join(t.TempDir(), "m.db"))
		if err != nil {
			t.Fatal(err)
		}
		logs := &testkit.Output{}
		gw, err := gateway.New(testkit.Context(t), cfg, gateway.Options{Store: st, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		_ = gw.Close(context.Background())
		st.Close()
		if warned := strings.Contains(logs.String(), "refused by the others"); warned == withKey {
			t.Errorf("with a session key %v: warned %v\n%s", withKey, warned, logs)
		}
	}
}

// A backend OAuth credential that cannot be read stops the gateway at
// start with the key that names it, never the value.
func TestAnUnreadableBackendCredentialNamesItsKey(t *testing.T) {
	dir := t.TempDir()
	badPEM := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(badPEM, []byte("-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ5dGVz\n-----END PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const base = "backends:\n  - name: r\n    kind: http\n    url: http://127.0.0.1:9/mcp\n    oauth: "
	for _, c := range []struct{ oauth, key string }{
		{"{client_id: gw, client_secret_from: MCPGATE_TEST_UNSET}", "backends[0].oauth.client_secret_from"},
		{"{client_id: gw, client_secret_file: " + dir + "/none}", "backends[0].oauth.client_secret_file"},
		{"{client_id: gw, auth_method: private_key_jwt, private_key_file: " + badPEM + "}", "backends[0].oauth.private_key_file"},
		{"{client_id: gw, auth_method: private_key_jwt, private_key_from: MCPGATE_TEST_UNSET}", "backends[0].oauth.private_key_from"},
		{"{grant: jwt_bearer, assertion_file: " + dir + "/none}", "backends[0].oauth.assertion_file"},
		{"{grant: jwt_bearer, assertion_from: MCPGATE_TEST_UNSET}", "backends[0].oauth.assertion_from"},
	} {
		t.Run(c.key, func(t *testing.T) {
			cfg, err := config.Parse([]byte(base + strings.Replace(c.oauth, "{", "{issuer: https://as.example, ", 1) + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			st, err := sqlite.Open(testkit.Context(t), filepath.Join(t.TempDir(), "m.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			gw, err := gateway.New(testkit.Context(t), cfg, gateway.Options{Store: st, Logger: slog.New(slog.DiscardHandler)})
			if err == nil {
				_ = gw.Close(context.Background())
				t.Fatal("the gateway started")
			}
			if !strings.Contains(err.Error(), c.key) || strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("%v: want the key %s named, the value not", err, c.key)
			}
		})
	}
}
