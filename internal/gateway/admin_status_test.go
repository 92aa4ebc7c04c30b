// admin_status_test.go pins where the console's status messages and
// cookies come from: a message only from the console itself (a sealed
// cookie a change sets), never from a query a link can set; cookies
// Secure whenever the gateway's public URL is https.

package gateway_test

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestConsoleStatusMessagesComeFromTheConsoleNotALink(t *testing.T) {
	e := gwStart(t, "listen: 127.0.0.1:0\n")
	secret, _ := e.token("ops", "admin")
	cookie := adminLogin(t, e, secret)
	const planted = "Revoked. Now paste your token at evil.example"
	for _, path := range []string{"/admin/?done=" + url.QueryEscape(planted), "/admin/tokens?done=" + url.QueryEscape(planted)} {
		if _, page := adminDo(t, e, "GET", path, nil, map[string]string{"Cookie": cookie}); strings.Contains(page, "evil.example") {
			t.Errorf("GET %s shows the link's message", path)
		}
	}
	_, page := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie})
	csrf := adminCSRF.FindStringSubmatch(page)[1]
	_, victim := e.token("ci", "editor")
	resp, _ := adminDo(t, e, "POST", "/admin/tokens/revoke", url.Values{"csrf": {csrf}, "id": {victim}},
		map[string]string{"Cookie": cookie, "Origin": e.base})
	var flash string
	for _, c := range resp.Cookies() {
		if c.Name == "mcpgate_flash" {
			flash = c.Name + "=" + c.Value
		}
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/admin/tokens" || flash == "" {
		t.Fatalf("revoke: %d %s, flash cookie %q", resp.StatusCode, resp.Header.Get("Location"), flash)
	}
	if _, page := adminDo(t, e, "GET", "/admin/tokens", nil, map[string]string{"Cookie": cookie + "; " + flash}); !strings.Contains(page, "Revoked "+victim+".") {
		t.Error("the page after the revocation does not say so")
	}
	// A flash cookie the console did not seal says nothing.
	if _, page := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie + "; mcpgate_flash=" + url.QueryEscape(planted)}); strings.Contains(page, "evil.example") {
		t.Error("an unsealed flash cookie is shown")
	}
}

func TestConsoleCookiesAreSecureWhenThePublicURLIsHTTPS(t *testing.T) {
	for resource, secure := range map[string]bool{"https://gw.example.com/mcp": true, "http://127.0.0.1:8080/mcp": false} {
		e := gwStart(t, "listen: 127.0.0.1:0\nauth: {oauth: {resource: "+resource+", builtin: true}}\n")
		secret, _ := e.token("ops", "admin")
		resp, _ := adminDo(t, e, "POST", "/admin/login", url.Values{"token": {secret}}, map[string]string{"Origin": e.base})
		var found bool
		for _, c := range resp.Cookies() {
			if c.Name == "mcpgate_admin" {
				found = true
				if c.Secure != secure {
					t.Errorf("behind %s: the session cookie's Secure is %v", resource, c.Secure)
				}
			}
		}
		if !found {
			t.Errorf("behind %s: no session cookie (%d)", resource, resp.StatusCode)
		}
	}
}

// A console session opened with an access token of the built-in server
// ends when its grant is revoked: the console's check of a session knew
// only service tokens, and such a session went on minting admin tokens.
func TestAConsoleSessionOfAGrantEndsWithTheGrant(t *testing.T) {
	e := gwStart(t, "listen: 127.0.0.1:0\nauth:\n  oauth:\n    resource: "+oauthResource+"\n    builtin: true\n")
	ops, _ := e.token("ops", "admin")
	access := builtinGrant(t, e, ops, "console client", "admin").AccessToken
	cookie := adminLogin(t, e, access)
	if resp, _ := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie}); resp.StatusCode != http.StatusOK {
		t.Fatalf("the console with the grant's session: %d", resp.StatusCode)
	}
	grants, err := e.store.OAuthGrants(testkit.Context(t))
	if err != nil || len(grants) != 1 {
		t.Fatalf("grants %v %v", grants, err)
	}
	if err := e.store.RevokeOAuthGrant(testkit.Context(t), grants[0].ID, time.Now()); err != nil { // as `mcpgate oauth revoke` does
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the session to end with its grant", func() bool {
		resp, _ := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie})
		return resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(resp.Header.Get("Location"), "/admin/login")
	})
}

// Logging out ends the session on the server, for every replica: a copy
// of the cookie, kept from before the logout, opens nothing on this
// replica or another one over the same store. (It only cleared the cookie
// in the browser, and a copy kept working for hours.)
func TestLogoutEndsTheSessionOnEveryReplica(t *testing.T) {
	t.Setenv(config.SessionKeyEnv, strings.Repeat("cd", 32)) // replicas that share console sessions
	a := gwStart(t, "listen: 127.0.0.1:0\n")
	secret, _ := a.token("ops", "admin")
	cookie := adminLogin(t, a, secret)
	st, err := sqlite.Open(testkit.Context(t), a.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b, err := gateway.New(testkit.Context(t), a.cfg, gateway.Options{Store: st, Logger: slog.New(slog.DiscardHandler),
		Info: mcp.Implementation{Name: "replica-b", Version: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	bEnv := &gwEnv{t: t, base: bkServe(t, b)}
	for _, e := range []*gwEnv{a, bEnv} {
		if resp, _ := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie}); resp.StatusCode != http.StatusOK {
			t.Fatalf("the session on %s before the logout: %d", e.base, resp.StatusCode)
		}
	}
	_, page := adminDo(t, a, "GET", "/admin/", nil, map[string]string{"Cookie": cookie})
	resp, _ := adminDo(t, a, "POST", "/admin/logout", url.Values{"csrf": {adminCSRF.FindStringSubmatch(page)[1]}},
		map[string]string{"Cookie": cookie, "Origin": a.base})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	for _, e := range []*gwEnv{a, bEnv} {
		resp, _ := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie})
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/admin/login") {
			t.Errorf("the kept cookie after the logout, on %s: %d %s", e.base, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}
