//go:build unix

// upstream_test.go signs a person in to a real `mcpgate serve`'s
// built-in authorization server through an OpenID Connect provider (a
// test one, internal/oauthtest) instead of with a service token: from the
// page's link to the provider and back, the role from the ID token's
// groups as the configuration maps them, to an MCP call with the access
// token the client gets, and the person named in the audit log.

package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestAPersonSignsInToTheBuiltinServerThroughAnOpenIDProvider(t *testing.T) {
	bin := testkit.Mcpgate(t)
	is := oauthtest.New(t, "")
	is.Subject = "grace@test-idp"
	is.IDTokenClaims = map[string]any{"groups": []string{"staff", "mcp-editors"}}
	b := startBuiltinServe(t, bin, "viewer",
		"upstream: {issuer: \""+is.ID+"\", client_id: mcpgate-rp, role_claim: groups, roles: {mcp-editors: editor, mcp-admins: admin}, name: Test IdP}")
	base := "http://" + b.addr
	is.AddClient("mcpgate-rp", base+"/oauth/upstream/callback")

	// A client registers and asks for the editor scope.
	client, q := builtinClientRequest(t, base, "http://127.0.0.1:9/cb", "editor")
	q.Set("state", "s1")

	// The person's browser: the page, its link to the provider, the
	// provider, back to the gateway's consent page.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) (*http.Response, string) {
		t.Helper()
		resp, err := browser.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	_, page := get(base + "/oauth/authorize?" + q.Encode())
	link := regexp.MustCompile(`id="upstream-link" href="([^"]+)"`).FindStringSubmatch(page)
	if link == nil || !strings.Contains(page, "sign in with Test IdP") {
		t.Fatalf("the page offers no sign-in with the provider:\n%s", page)
	}
	resp, _ := get(base + html.UnescapeString(link[1]))
	resp, _ = get(resp.Header.Get("Location")) // the provider approves at once
	resp, page = get(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `<strong id="person">grace@test-idp</strong>`) ||
		!strings.Contains(page, `<strong id="person-role">editor</strong>`) {
		t.Fatalf("the consent page (%d):\n%s", resp.StatusCode, page)
	}
	form := url.Values{"decision": {"allow"}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		form.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	resp, err := browser.PostForm(base+"/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || back.Query().Get("code") == "" {
		t.Fatalf("the consent: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	// The client's token works at /mcp with the role the groups map to.
	resp, err = http.PostForm(base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
		"client_id": {client}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "code_verifier": {builtinVerifier}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if tok.AccessToken == "" || tok.Scope != "editor" {
		t.Fatalf("the token answer: %d %+v", resp.StatusCode, tok)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize with the access token: %d", resp.StatusCode)
	}
	b.srv.stop(t)
	out, stderr, err := cliRun(t, bin, "audit", "tail", "--store", b.db)
	if err != nil || !strings.Contains(out, "grace@test-idp") {
		t.Errorf("the audit log names no grace@test-idp: %v\n%s%s", err, out, stderr)
	}
}

// builtinVerifier is the PKCE verifier of builtinClientRequest's request.
const builtinVerifier = "a-verifier-of-forty-three-characters-or-more-0123456789"

// builtinClientRequest registers a client of the built-in server at base
// with the redirect URI and returns it and an authorization request of
// its for scope (PKCE with builtinVerifier).
func builtinClientRequest(t *testing.T, base, redirect, scope string) (client string, q url.Values) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": "A <test> client", "redirect_uris": []string{redirect}})
	resp, err := http.Post(base+"/oauth/register", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&reg) != nil {
		t.Fatalf("register: %d", resp.StatusCode)
	}
	sum := sha256.Sum256([]byte(builtinVerifier))
	return reg.ClientID, url.Values{"client_id": {reg.ClientID}, "redirect_uri": {redirect}, "response_type": {"code"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {base + "/mcp"}, "scope": {scope}, "state": {"st"}}
}
