package authserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/auth/authserver"
	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"golang.org/x/time/rate"
)

var levels = map[string]int{"viewer": 1, "editor": 2, "admin": 3}

// rig is a built-in server over a fresh SQLite store, with a service
// token per role.
type rig struct {
	t       testing.TB
	srv     *authserver.Server
	http    *httptest.Server
	st      store.Store
	tokens  *auth.Tokens
	secrets map[string]string // role → service token
	ids     map[string]string // role → its id
	mu      sync.Mutex
	audit   []store.AuditRecord
	cfg     authserver.Config
}

func newRig(t testing.TB, edit func(*authserver.Config)) *rig {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &rig{t: t, st: st, tokens: auth.NewTokens(st, nil), secrets: map[string]string{}, ids: map[string]string{}}
	for role := range levels {
		sec, rec, err := r.tokens.Create(ctx, "person-"+role, role, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		r.secrets[role], r.ids[role] = sec, rec.ID
	}
	mux := http.NewServeMux()
	r.http = httptest.NewServer(mux)
	t.Cleanup(r.http.Close)
	r.cfg = authserver.Config{
		Issuer: r.http.URL, Resource: r.http.URL + "/mcp", Store: st, Tokens: r.tokens,
		Scopes: map[string]string{"mcp:read": "viewer", "mcp:write": "editor", "mcp:admin": "admin"},
		Level:  func(role string) (int, bool) { n, ok := levels[role]; return n, ok },
		Key:    []byte("0123456789abcdef0123456789abcdef"),
		Audit: func(a store.AuditRecord) {
			r.mu.Lock()
			r.audit = append(r.audit, a)
			r.mu.Unlock()
		},
		// The documents the tests serve are on this machine, which an
		// operator would allow as a host.
		Outbound: &egress.Policy{AllowHosts: []string{"127.0.0.1"}},
	}
	if edit != nil {
		edit(&r.cfg)
	}
	r.srv, err = authserver.New(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.srv.Mount(mux)
	mux.HandleFunc("GET /client.json", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": r.http.URL + "/client.json", "client_name": "Metadata <Client>",
			"redirect_uris": []string{"http://127.0.0.1:9/cb"}})
	})
	return r
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (r *rig) register(redirects ...string) string {
	r.t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": "Test <b>client</b>", "redirect_uris": redirects, "token_endpoint_auth_method": "none"})
	resp, err := http.Post(r.http.URL+authserver.RegisterPath, "application/json", strings.NewReader(string(body)))
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ClientID string `json:"client_id"`
	}
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&out) != nil {
		r.t.Fatalf("register: %d", resp.StatusCode)
	}
	return out.ClientID
}

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXkdBjftJeZ4CVP"

func challenge(v string) string {
	s := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(s[:])
}

// authorizeQuery is a good authorization request of client.
func (r *rig) authorizeQuery(client, redirect string) url.Values {
	return url.Values{"client_id": {client}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"st&te=1"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}, "resource": {r.cfg.Resource}, "scope": {"mcp:write"}}
}

// signIn posts the consent form for q with the token of role and
// returns the redirect's query (or fails on another answer).
func (r *rig) signIn(q url.Values, secret string) (url.Values, *http.Response) {
	r.t.Helper()
	form := url.Values{}
	for k, v := range q {
		form[k] = v
	}
	form.Set("token", secret)
	form.Set("decision", "allow")
	resp, err := noRedirect.PostForm(r.http.URL+authserver.AuthorizePath, form)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		return nil, resp
	}
	return loc.Query(), resp
}

type tokenAnswer struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
	status       int
}

func (r *rig) token(form url.Values) tokenAnswer {
	r.t.Helper()
	resp, err := http.PostForm(r.http.URL+authserver.TokenPath, form)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var a tokenAnswer
	_ = json.NewDecoder(resp.Body).Decode(&a)
	a.status = resp.StatusCode
	return a
}

func (r *rig) exchange(client, redirect, code string) tokenAnswer {
	return r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {client},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {r.cfg.Resource}})
}

// codeFor runs the sign-in for a fresh client and returns it and a code.
func (r *rig) codeFor(role string) (client, code string) {
	r.t.Helper()
	client = r.register("http://127.0.0.1:9/cb")
	q, resp := r.signIn(r.authorizeQuery(client, "http://127.0.0.1:9/cb"), r.secrets[role])
	if q == nil || q.Get("code") == "" {
		r.t.Fatalf("sign-in: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	return client, q.Get("code")
}

// The whole flow: registration, the page, consent with a service token,
// the code for tokens, the access token accepted with the role granted,
// the state and issuer given back exactly.
func TestTheCodeFlowGrantsTheRoleAskedForAtMostTheTokens(t *testing.T) {
	r := newRig(t, nil)
	client := r.register("http://127.0.0.1:9/cb")
	q := r.authorizeQuery(client, "http://127.0.0.1:9/cb")
	resp, err := http.Get(r.http.URL + authserver.AuthorizePath + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Test &lt;b&gt;client&lt;/b&gt;") || strings.Contains(string(page), "<b>client") ||
		!strings.Contains(string(page), `<strong id="role">editor</strong>`) {
		t.Fatalf("the page (%d) does not show the client escaped and the role asked for:\n%s", resp.StatusCode, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q lets the page be framed", csp)
	}
	back, _ := r.signIn(q, r.secrets["editor"])
	if back.Get("state") != "st&te=1" || back.Get("iss") != r.http.URL || back.Get("code") == "" {
		t.Fatalf("the redirect: %v", back)
	}
	a := r.exchange(client, "http://127.0.0.1:9/cb", back.Get("code"))
	if a.status != 200 || a.AccessToken == "" || a.RefreshToken == "" || a.Scope != "mcp:write" {
		t.Fatalf("the exchange: %+v", a)
	}
	id, exp, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now())
	if err != nil || id.Role != "editor" || id.Subject != "person-editor" || time.Until(exp) > authserver.DefaultAccessLifetime {
		t.Fatalf("the access token: %+v %v %v", id, exp, err)
	}

	// A viewer asking for mcp:admin gets viewer.
	q = r.authorizeQuery(client, "http://127.0.0.1:9/cb")
	q.Set("scope", "mcp:admin")
	back, _ = r.signIn(q, r.secrets["viewer"])
	a = r.exchange(client, "http://127.0.0.1:9/cb", back.Get("code"))
	if id, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now()); err != nil || id.Role != "viewer" || a.Scope != "mcp:read" {
		t.Errorf("a viewer asking for admin got %q (scope %q), %v; want viewer", id.Role, a.Scope, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds := map[string]int{}
	for _, rec := range r.audit {
		kinds[rec.Kind+"/"+rec.Name+"/"+rec.Outcome]++
	}
	if kinds["oauth/authorize/ok"] != 2 || kinds["oauth/token/ok"] != 2 || kinds["oauth/register/ok"] != 1 {
		t.Errorf("audited %v", kinds)
	}
}

// Each bad request is refused, and none reaches the client's redirect
// URI unless the client and the redirect URI check out.
func TestBadAuthorizationRequestsAreRefused(t *testing.T) {
	r := newRig(t, nil)
	client := r.register("http://127.0.0.1:9/cb")
	good := r.authorizeQuery(client, "http://127.0.0.1:9/cb")
	// Every client here registered itself or is a metadata document, so
	// every error before consent is on the page, naming the error, never
	// a redirect (RFC 9700 §4.11.2): it made the server an open redirector.
	for _, c := range []struct {
		rule  string
		edit  func(url.Values)
		error string // the error the page names ("": the client's)
	}{
		{"an unknown client is answered on the page", func(q url.Values) { q.Set("client_id", "mcpc_nobody") }, ""},
		{"a redirect URI not registered is never followed (open redirect)", func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") }, ""},
		{"a redirect URI is compared exactly", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:9/cb/") }, ""},
		{"a parameter given twice is refused", func(q url.Values) { q.Add("redirect_uri", "https://evil.example/cb") }, ""},
		{"a plain PKCE method is refused", func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		{"no PKCE challenge is refused", func(q url.Values) { q.Del("code_challenge") }, "invalid_request"},
		{"another resource is refused", func(q url.Values) { q.Set("resource", "https://other.example/mcp") }, "invalid_target"},
		{"an implicit grant is refused", func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		{"an unknown scope is refused", func(q url.Values) { q.Set("scope", "root") }, "invalid_scope"},
		{"a PKCE challenge that is not base64url is refused", func(q url.Values) { q.Set("code_challenge", "\x00"+strings.Repeat("a", 42)) }, "invalid_request"},
		{"a scope with a character no scope has is refused", func(q url.Values) { q.Set("scope", "mcp:write x\x00y") }, "invalid_scope"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			q := url.Values{}
			for k, v := range good {
				q[k] = append([]string(nil), v...)
			}
			c.edit(q)
			for _, how := range []string{"GET", "POST"} {
				var resp *http.Response
				var err error
				if how == "GET" {
					resp, err = noRedirect.Get(r.http.URL + authserver.AuthorizePath + "?" + q.Encode())
				} else {
					form := url.Values{"token": {r.secrets["admin"]}, "decision": {"allow"}}
					for k, v := range q {
						form[k] = v
					}
					resp, err = noRedirect.PostForm(r.http.URL+authserver.AuthorizePath, form)
				}
				if err != nil {
					t.Fatal(err)
				}
				page, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				loc := resp.Header.Get("Location")
				if resp.StatusCode != 400 || loc != "" || !strings.Contains(string(page), c.error) {
					t.Errorf("%s: %d, Location %q; want 400 on the page naming %q", how, resp.StatusCode, loc, c.error)
				}
			}
		})
	}
	t.Run("a wrong service token is shown the page again, nothing issued", func(t *testing.T) {
		if back, resp := r.signIn(good, "mcp_wrong"); back != nil || resp.StatusCode != 401 {
			t.Errorf("a wrong token: %d %v", resp.StatusCode, back)
		}
	})
	t.Run("deny goes back with access_denied", func(t *testing.T) {
		form := url.Values{"decision": {"deny"}}
		for k, v := range good {
			form[k] = v
		}
		resp, err := noRedirect.PostForm(r.http.URL+authserver.AuthorizePath, form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if u, _ := url.Parse(resp.Header.Get("Location")); u == nil || u.Query().Get("error") != "access_denied" {
			t.Errorf("deny: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
}

// Codes, verifiers and resources that do not check out are refused at
// the token endpoint; a code presented twice revokes what the first
// presentation got.
func TestBadTokenRequestsAreRefused(t *testing.T) {
	r := newRig(t, nil)
	const cb = "http://127.0.0.1:9/cb"
	t.Run("a PKCE verifier that does not match", func(t *testing.T) {
		client, code := r.codeFor("editor")
		a := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {client}, "redirect_uri": {cb},
			"code_verifier": {strings.Repeat("x", 43)}})
		if a.status != 400 || a.Error != "invalid_grant" {
			t.Errorf("%+v", a)
		}
	})
	t.Run("a foreign code (issued to another client)", func(t *testing.T) {
		_, code := r.codeFor("editor")
		other := r.register(cb)
		if a := r.exchange(other, cb, code); a.Error != "invalid_grant" {
			t.Errorf("%+v", a)
		}
	})
	t.Run("another redirect URI than the code's", func(t *testing.T) {
		client, code := r.codeFor("editor")
		if a := r.exchange(client, "http://127.0.0.1:9/other", code); a.Error != "invalid_grant" {
			t.Errorf("%+v", a)
		}
	})
	t.Run("a wrong resource", func(t *testing.T) {
		client, code := r.codeFor("editor")
		a := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {client}, "redirect_uri": {cb},
			"code_verifier": {verifier}, "resource": {"https://other.example/mcp"}})
		if a.Error != "invalid_target" {
			t.Errorf("%+v", a)
		}
	})
	t.Run("a reused code revokes the grant the first use made", func(t *testing.T) {
		client, code := r.codeFor("editor")
		first := r.exchange(client, cb, code)
		if first.AccessToken == "" {
			t.Fatalf("%+v", first)
		}
		if a := r.exchange(client, cb, code); a.Error != "invalid_grant" || !strings.Contains(a.Description, "revoked") {
			t.Errorf("the second use: %+v", a)
		}
		if _, _, err := r.srv.Verify(context.Background(), first.AccessToken, time.Now()); !errors.Is(err, authserver.ErrGrantRevoked) {
			t.Errorf("the first use's access token: %v, want its grant revoked", err)
		}
		if a := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}, "client_id": {client}}); a.Error != "invalid_grant" {
			t.Errorf("the first use's refresh token: %+v", a)
		}
	})
	t.Run("client authentication is refused (public clients only)", func(t *testing.T) {
		req, _ := http.NewRequest("POST", r.http.URL+authserver.TokenPath, strings.NewReader("grant_type=authorization_code"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("c", "s")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("%d", resp.StatusCode)
		}
	})
}

// Refresh tokens rotate; the one a rotation replaced, presented again,
// revokes the grant; a revoked grant, a revoked proving token, an
// expired refresh token are refused.
func TestRefreshTokensRotateAndAReuseRevokesTheGrant(t *testing.T) {
	now := time.Now()
	var clock sync.Mutex
	r := newRig(t, func(c *authserver.Config) {
		c.RefreshLifetime = time.Hour
		c.Now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	})
	const cb = "http://127.0.0.1:9/cb"
	refresh := func(client, rt string) tokenAnswer {
		return r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {client}})
	}
	client, code := r.codeFor("editor")
	first := r.exchange(client, cb, code)
	second := refresh(client, first.RefreshToken)
	if _, _, err := r.srv.Verify(context.Background(), second.AccessToken, time.Now()); err != nil {
		t.Fatalf("the refreshed access token: %v", err)
	}
	if second.status != 200 || second.RefreshToken == first.RefreshToken || second.AccessToken == "" {
		t.Fatalf("the refresh: %+v", second)
	}
	if a := refresh(r.register(cb), second.RefreshToken); a.Error != "invalid_grant" {
		t.Errorf("another client's refresh: %+v", a)
	}
	if a := refresh(client, first.RefreshToken); a.Error != "invalid_grant" || !strings.Contains(a.Description, "revoked") {
		t.Errorf("the replaced refresh token again: %+v", a)
	}
	if a := refresh(client, second.RefreshToken); a.Error != "invalid_grant" {
		t.Errorf("after a reuse the current refresh token still works: %+v", a)
	}
	if _, _, err := r.srv.Verify(context.Background(), second.AccessToken, time.Now()); !errors.Is(err, authserver.ErrGrantRevoked) {
		t.Errorf("after a reuse the current access token (checked before) still works: %v", err)
	}

	t.Run("a revoked grant", func(t *testing.T) {
		client, code := r.codeFor("editor")
		a := r.exchange(client, cb, code)
		resp, err := http.PostForm(r.http.URL+authserver.RevokePath, url.Values{"token": {a.RefreshToken}, "client_id": {client}})
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("revoke: %v %v", resp, err)
		}
		resp.Body.Close()
		if b := refresh(client, a.RefreshToken); b.Error != "invalid_grant" {
			t.Errorf("%+v", b)
		}
		if _, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now()); !errors.Is(err, authserver.ErrGrantRevoked) {
			t.Errorf("its access token: %v", err)
		}
	})
	t.Run("the proving service token revoked", func(t *testing.T) {
		client, code := r.codeFor("viewer")
		a := r.exchange(client, cb, code)
		if err := r.tokens.Revoke(context.Background(), r.ids["viewer"]); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now()); !errors.Is(err, authserver.ErrGrantRevoked) {
			t.Errorf("its access token: %v", err)
		}
		if b := refresh(client, a.RefreshToken); b.Error != "invalid_grant" {
			t.Errorf("%+v", b)
		}
	})
	t.Run("an expired refresh token", func(t *testing.T) {
		client, code := r.codeFor("admin")
		a := r.exchange(client, cb, code)
		clock.Lock()
		now = now.Add(2 * time.Hour)
		clock.Unlock()
		if b := refresh(client, a.RefreshToken); b.Error != "invalid_grant" || !strings.Contains(b.Description, "expired") {
			t.Errorf("%+v", b)
		}
	})
}

// Only the client a token was issued to may revoke it (RFC 7009 §2.1):
// a request without client_id, or from another client, or with client
// authentication this server does not serve, is refused and the grant
// stays usable; the owner's revocation, by refresh or by access token,
// holds; an unknown token is answered 200.
func TestOnlyTheTokensClientRevokesIt(t *testing.T) {
	r := newRig(t, nil)
	const cb = "http://127.0.0.1:9/cb"
	revoke := func(form url.Values, basic bool) (int, string) {
		req, _ := http.NewRequest("POST", r.http.URL+authserver.RevokePath, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basic {
			req.SetBasicAuth(form.Get("client_id"), "secret")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&a)
		return resp.StatusCode, a.Error
	}
	client, code := r.codeFor("editor")
	a := r.exchange(client, cb, code)
	other := r.register(cb)
	for _, c := range []struct {
		name   string
		form   url.Values
		basic  bool
		status int
		error  string
	}{
		{"no client_id", url.Values{"token": {a.RefreshToken}}, false, 400, "invalid_request"},
		{"another client, by refresh token", url.Values{"token": {a.RefreshToken}, "client_id": {other}}, false, 400, "invalid_grant"},
		{"another client, by access token", url.Values{"token": {a.AccessToken}, "client_id": {other}}, false, 400, "invalid_grant"},
		{"client authentication", url.Values{"token": {a.RefreshToken}, "client_id": {client}}, true, 401, "invalid_client"},
		{"an unknown token", url.Values{"token": {"mcpr_unknown"}, "client_id": {client}}, false, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if status, e := revoke(c.form, c.basic); status != c.status || e != c.error {
				t.Errorf("revoke: %d %q, want %d %q", status, e, c.status, c.error)
			}
			if _, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now()); err != nil {
				t.Errorf("the grant after a refused revocation: %v", err)
			}
		})
	}
	if status, e := revoke(url.Values{"token": {a.AccessToken}, "client_id": {client}}, false); status != 200 {
		t.Fatalf("the owner's revocation by access token: %d %q", status, e)
	}
	if _, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now()); !errors.Is(err, authserver.ErrGrantRevoked) {
		t.Errorf("after the owner's revocation: %v", err)
	}
	if b := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.RefreshToken}, "client_id": {client}}); b.Error != "invalid_grant" {
		t.Errorf("its refresh token after the revocation: %+v", b)
	}
}

// An access token for another audience, from another issuer, or signed
// with another key is refused.
func TestAccessTokensOfOthersAreRefused(t *testing.T) {
	r := newRig(t, nil)
	other := newRig(t, func(c *authserver.Config) { c.Key = []byte("another key of at least 32 bytes!") })
	client, code := other.codeFor("admin")
	foreign := other.exchange(client, "http://127.0.0.1:9/cb", code)
	if _, _, err := r.srv.Verify(context.Background(), foreign.AccessToken, time.Now()); err == nil {
		t.Error("a token of another server was accepted")
	}
	sameKey := newRig(t, func(c *authserver.Config) { c.Key = r.cfg.Key })
	client, code = sameKey.codeFor("admin")
	a := sameKey.exchange(client, "http://127.0.0.1:9/cb", code)
	if _, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now()); err == nil {
		t.Error("a token for another audience and issuer (under the same key) was accepted")
	}
}

// A Client ID Metadata Document is a client: fetched, its client_id must
// be its URL, and its redirect URIs are the ones it lists.
func TestAClientIDMetadataDocumentIsAClient(t *testing.T) {
	r := newRig(t, nil)
	id := r.http.URL + "/client.json"
	q := r.authorizeQuery(id, "http://127.0.0.1:9/cb")
	resp, err := http.Get(r.http.URL + authserver.AuthorizePath + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Metadata &lt;Client&gt;") {
		t.Fatalf("%d\n%s", resp.StatusCode, page)
	}
	back, _ := r.signIn(q, r.secrets["viewer"])
	if a := r.exchange(id, "http://127.0.0.1:9/cb", back.Get("code")); a.AccessToken == "" {
		t.Errorf("%+v", a)
	}
	for _, bad := range []string{r.http.URL + "/missing.json", r.http.URL + "/", "http://example.com/client.json"} {
		resp, err := noRedirect.Get(r.http.URL + authserver.AuthorizePath + "?" + r.authorizeQuery(bad, "http://127.0.0.1:9/cb").Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
			t.Errorf("client_id %s: %d %s", bad, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	t.Run("private addresses are refused by default", func(t *testing.T) {
		strict := newRig(t, func(c *authserver.Config) { c.Outbound = nil })
		u := strict.http.URL + "/client.json"
		resp, err := noRedirect.Get(strict.http.URL + authserver.AuthorizePath + "?" + strict.authorizeQuery(u, "http://127.0.0.1:9/cb").Encode())
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(page), "could not be fetched") {
			t.Errorf("%d\n%s", resp.StatusCode, page)
		}
	})
}

// A metadata document is fetched once and kept as long as its
// Cache-Control allows (five minutes when it says nothing, an hour at
// most); no-store and no-cache keep nothing, and neither does a fetch that
// failed.
func TestAMetadataDocumentIsKeptAsItsAnswerAllows(t *testing.T) {
	for _, c := range []struct {
		rule         string
		cacheControl string
		kept         time.Duration // how long it is kept; 0: not at all
	}{
		{"no header: five minutes", "", 5 * time.Minute},
		{"max-age", "public, max-age=60", time.Minute},
		{"max-age above the bound: an hour", "max-age=86400", time.Hour},
		{"no-store", "no-store", 0},
		{"no-cache", "max-age=600, no-cache", 0},
		{"max-age=0", "max-age=0", 0},
		{"a malformed max-age", "max-age=soon", 0},
	} {
		t.Run(c.rule, func(t *testing.T) {
			now := time.Now()
			var clock sync.Mutex
			r := newRig(t, func(cfg *authserver.Config) {
				cfg.Now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
			})
			var fetches atomic.Int32
			doc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				fetches.Add(1)
				if c.cacheControl != "" {
					w.Header().Set("Cache-Control", c.cacheControl)
				}
				_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "http://" + req.Host + "/client.json",
					"redirect_uris": []string{"http://127.0.0.1:9/cb"}})
			}))
			t.Cleanup(doc.Close)
			id := doc.URL + "/client.json"
			authorize := func() {
				t.Helper()
				resp, err := http.Get(r.http.URL + authserver.AuthorizePath + "?" + r.authorizeQuery(id, "http://127.0.0.1:9/cb").Encode())
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("authorize: %d", resp.StatusCode)
				}
			}
			advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
			authorize()
			authorize()
			want := int32(1)
			if c.kept == 0 {
				want = 2
			}
			if n := fetches.Load(); n != want {
				t.Fatalf("two authorizations fetched the document %d times, want %d", n, want)
			}
			if c.kept == 0 {
				return
			}
			advance(c.kept - time.Second)
			authorize()
			if n := fetches.Load(); n != 1 {
				t.Errorf("within %v: %d fetches, want 1", c.kept, n)
			}
			advance(2 * time.Second)
			authorize()
			if n := fetches.Load(); n != 2 {
				t.Errorf("after %v: %d fetches, want 2", c.kept, n)
			}
		})
	}
	t.Run("a failed fetch is not kept", func(t *testing.T) {
		r := newRig(t, nil)
		var up atomic.Bool
		doc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if !up.Load() {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "http://" + req.Host + "/client.json",
				"redirect_uris": []string{"http://127.0.0.1:9/cb"}})
		}))
		t.Cleanup(doc.Close)
		u := r.http.URL + authserver.AuthorizePath + "?" + r.authorizeQuery(doc.URL+"/client.json", "http://127.0.0.1:9/cb").Encode()
		for i, want := range []int{400, 200} {
			if i == 1 {
				up.Store(true)
			}
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("authorization %d: %d, want %d", i+1, resp.StatusCode, want)
			}
		}
	})
}

// Registration checks what a client says of itself, and stops at the
// limit of stored clients.
func TestRegistrationIsCheckedAndLimited(t *testing.T) {
	// No rate limit: twelve registrations in a few milliseconds outrun a
	// burst of ten at 1,000 a second.
	r := newRig(t, func(c *authserver.Config) {
		c.ClientLimit = 2
		c.RegisterRate = rate.Inf
		c.RegisterPerSource = rate.Inf
	})
	post := func(body string) int {
		resp, err := http.Post(r.http.URL+authserver.RegisterPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct{ rule, body string }{
		{"a javascript: redirect", `{"redirect_uris":["javascript:alert(1)"]}`},
		{"an http redirect afar", `{"redirect_uris":["http://evil.example/cb"]}`},
		{"a redirect with a fragment", `{"redirect_uris":["https://a.example/cb#x"]}`},
		{"no redirect", `{"redirect_uris":[]}`},
		{"a confidential client", `{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`},
		{"the implicit grant", `{"redirect_uris":["https://a.example/cb"],"grant_types":["implicit"]}`},
		{"not JSON", `redirect_uris=x`},
		{"a redirect that would end the consent page's CSP directive", `{"redirect_uris":["https://a.example/cb;script-src-elem *"]}`},
		{"a redirect with a comma", `{"redirect_uris":["https://a.example/cb,x"]}`},
		{"a client name with a NUL", `{"client_name":"a\u0000b","redirect_uris":["https://a.example/cb"]}`},
		{"a client name with a line break", `{"client_name":"a\nb","redirect_uris":["https://a.example/cb"]}`},
	} {
		if got := post(c.body); got != 400 {
			t.Errorf("%s: %d, want 400", c.rule, got)
		}
	}
	for i, want := range []int{201, 201, 503} {
		if got := post(`{"redirect_uris":["https://a.example/cb","com.example.app:/cb"]}`); got != want {
			t.Errorf("registration %d: %d, want %d", i+1, got, want)
		}
	}
	flood := newRig(t, func(c *authserver.Config) { c.RegisterRate = 0.001 })
	codes := map[int]int{}
	for range 12 {
		resp, err := http.Post(flood.http.URL+authserver.RegisterPath, "application/json", strings.NewReader(`{"redirect_uris":["https://a.example/cb"]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes[resp.StatusCode]++
	}
	if codes[201] != 10 || codes[429] != 2 {
		t.Errorf("12 registrations at once: %v, want 10 created (the burst) and 2 refused", codes)
	}
}

// One address registers a burst, then at the per-source rate: it cannot
// use the store up alone. And a client that never completed a sign-in is
// forgotten after ClientIdle: max_clients anonymous registrations turned
// registration off for ever before.
func TestRegistrationCannotBeUsedUp(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := newRig(t, func(c *authserver.Config) { c.ClientLimit = 3; c.RegisterRate = 1000; c.Now = clock })
	post := func() int {
		resp, err := http.Post(r.http.URL+authserver.RegisterPath, "application/json", strings.NewReader(`{"redirect_uris":["https://a.example/cb"]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	codes := map[int]int{}
	for range 12 {
		codes[post()]++
	}
	if codes[201] != 3 || codes[503] != 7 || codes[429] != 2 {
		t.Errorf("12 registrations from one address: %v, want 3 stored, 7 over the limit, 2 over the address's burst", codes)
	}
	mu.Lock()
	now = now.Add(25 * time.Hour) // the three never signed in
	mu.Unlock()
	if got := post(); got != 201 {
		t.Errorf("a registration a day later: %d, want 201", got)
	}
}

// The metadata says what is served, and nothing more.
func TestMetadataNamesOnlyWhatIsServed(t *testing.T) {
	r := newRig(t, nil)
	resp, err := http.Get(r.http.URL + authserver.MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(md)
	for _, want := range []string{`"issuer":"` + r.http.URL + `"`, `"code_challenge_methods_supported":["S256"]`,
		`"grant_types_supported":["authorization_code","refresh_token"]`, `"client_id_metadata_document_supported":true`,
		`"token_endpoint_auth_methods_supported":["none"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metadata lacks %s:\n%s", want, b)
		}
	}
	if regexp.MustCompile(`implicit|password|plain`).Match(b) {
		t.Errorf("metadata names something not served:\n%s", b)
	}
}

// One person holds at most GrantLimit live grants: the next consent is
// refused on the page, saying what to do, and nothing is issued; a
// revoked grant frees its place.
func TestOnePersonHoldsAtMostTheGrantLimit(t *testing.T) {
	r := newRig(t, func(c *authserver.Config) { c.GrantLimit = 2 })
	for range 2 {
		client, code := r.codeFor("editor")
		if tok := r.exchange(client, "http://127.0.0.1:9/cb", code); tok.AccessToken == "" {
			t.Fatalf("a grant within the limit: %+v", tok)
		}
	}
	client := r.register("http://127.0.0.1:9/cb")
	form := url.Values{"token": {r.secrets["editor"]}, "decision": {"allow"}}
	for k, v := range r.authorizeQuery(client, "http://127.0.0.1:9/cb") {
		form[k] = v
	}
	resp, err := noRedirect.PostForm(r.http.URL+authserver.AuthorizePath, form)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" || !strings.Contains(string(page), "revoke one") {
		t.Errorf("a third grant: %d %q, want 403 on the page saying to revoke one", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Another person is not held by the first one's grants.
	if _, code := r.codeFor("viewer"); code == "" {
		t.Error("another person's consent was refused")
	}
	grants, err := r.st.OAuthGrants(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range grants {
		if g.Subject == "person-editor" {
			if err := r.st.RevokeOAuthGrant(context.Background(), g.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if _, code := r.codeFor("editor"); code == "" {
		t.Error("a consent after a revocation was refused")
	}
}

// A grant lasts GrantLifetime from consent, however often it is
// refreshed: then its refresh is refused and its access tokens are, and
// the person signs in again. Before, each refresh slid the expiry forward
// for ever.
func TestAGrantEndsAtItsLifetimeWhateverItsRefreshes(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	r := newRig(t, func(c *authserver.Config) { c.GrantLifetime, c.AccessLifetime, c.Now = 3*time.Hour, 2*time.Hour, clock })
	client, code := r.codeFor("editor")
	tok := r.exchange(client, "http://127.0.0.1:9/cb", code)
	for range 2 { // refreshed within the lifetime: fine
		advance(time.Hour)
		tok = r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}})
		if tok.AccessToken == "" {
			t.Fatalf("a refresh within the lifetime: %+v", tok)
		}
	}
	advance(90 * time.Minute)
	if _, _, err := r.srv.Verify(context.Background(), tok.AccessToken, clock()); err == nil {
		t.Error("an access token of a grant past its lifetime is accepted")
	}
	again := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}})
	if again.Error != "invalid_grant" || !strings.Contains(again.Description, "lifetime") {
		t.Errorf("a refresh past the lifetime: %+v, want invalid_grant naming the lifetime", again)
	}
}
