package authserver_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/authserver"
	"github.com/mcpgate/mcpgate/internal/egress/egresstest"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
)

// upstreamRig is a built-in server whose page also signs people in at an
// OpenID Connect provider (internal/oauthtest): person@test-idp is an
// editor there, viewer@test-idp a viewer, anyone else nobody.
func upstreamRig(t *testing.T, edits ...func(*authserver.Config)) (*rig, *oauthtest.Issuer) {
	t.Helper()
	is := oauthtest.New(t, "")
	r := newRig(t, func(c *authserver.Config) {
		c.Upstream = &authserver.Provider{Issuer: is.ID, ClientID: "gateway-rp", Name: "Test <IdP>",
			Role: func(claims map[string]any) (string, bool) {
				role, ok := map[string]string{"person@test-idp": "editor", "viewer@test-idp": "viewer"}[claims["email"].(string)]
				return role, ok
			}}
		for _, e := range edits {
			e(c)
		}
	})
	is.AddClient("gateway-rp", r.http.URL+authserver.UpstreamCallbackPath)
	return r, is
}

// browser is a person's browser: it keeps cookies and shows redirects.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(u string) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

var (
	upstreamLinkRe = regexp.MustCompile(`id="upstream-link" href="([^"]+)"`)
	hiddenRe       = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// toProvider opens the page for q and follows its link to the provider:
// the provider's authorization URL.
func (b *browser) toProvider(r *rig, q url.Values) *url.URL {
	b.t.Helper()
	_, page := b.get(r.http.URL + authserver.AuthorizePath + "?" + q.Encode())
	m := upstreamLinkRe.FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, "sign in with Test &lt;IdP&gt;") {
		b.t.Fatalf("the page offers no escaped link to the provider:\n%s", page)
	}
	resp, _ := b.get(r.http.URL + html.UnescapeString(m[1]))
	to, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || err != nil {
		b.t.Fatalf("the link: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return to
}

// atProvider signs in at the provider and returns where it sends the
// browser back to (the server's callback).
func (b *browser) atProvider(to *url.URL) *url.URL {
	b.t.Helper()
	resp, _ := b.get(to.String())
	back, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil {
		b.t.Fatalf("the provider: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return back
}

// consent posts the consent page's form (its hidden fields, with edit
// applied) and returns the answer.
func (b *browser) consent(r *rig, page string, edit func(url.Values)) *http.Response {
	b.t.Helper()
	form := url.Values{}
	for _, m := range hiddenRe.FindAllStringSubmatch(page, -1) {
		form.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	form.Set("decision", "allow")
	if edit != nil {
		edit(form)
	}
	resp, err := b.c.PostForm(r.http.URL+authserver.AuthorizePath, form)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestAPersonSignsInThroughTheUpstreamProvider(t *testing.T) {
	r, is := upstreamRig(t)
	client := r.register("http://127.0.0.1:9/cb")
	q := r.authorizeQuery(client, "http://127.0.0.1:9/cb")
	b := newBrowser(t)
	to := b.toProvider(r, q)
	p := to.Query()
	if !strings.HasPrefix(to.String(), is.ID+"/authorize?") || p.Get("client_id") != "gateway-rp" || p.Get("code_challenge_method") != "S256" ||
		p.Get("nonce") == "" || p.Get("state") == "" || p.Get("state") == q.Get("state") || !strings.Contains(p.Get("scope"), "openid") ||
		p.Get("redirect_uri") != r.http.URL+authserver.UpstreamCallbackPath {
		t.Fatalf("the request to the provider: %s", to)
	}
	resp, page := b.get(b.atProvider(to).String())
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `<strong id="person">person@test-idp</strong>`) ||
		!strings.Contains(page, `<strong id="role">editor</strong>`) || strings.Contains(page, `name="token"`) {
		t.Fatalf("the consent page after the provider (%d):\n%s", resp.StatusCode, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' http://127.0.0.1:9;") {
		t.Errorf("CSP %q: the form's redirect to the client would be blocked", csp)
	}
	resp = b.consent(r, page, nil)
	back, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || back.Query().Get("code") == "" || back.Query().Get("state") != q.Get("state") {
		t.Fatalf("the consent: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	a := r.exchange(client, "http://127.0.0.1:9/cb", back.Query().Get("code"))
	id, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now())
	if err != nil || id.Role != "editor" || id.Subject != "person@test-idp" {
		t.Fatalf("the access token: %+v %v (%+v)", id, err, a)
	}
	if a2 := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.RefreshToken}, "client_id": {client}}); a2.AccessToken == "" {
		t.Errorf("a refresh of the provider's sign-in: %+v", a2)
	}

	// A viewer asking for mcp:write gets viewer: never more than theirs.
	is.Subject = "viewer@test-idp"
	b = newBrowser(t)
	_, page = b.get(b.atProvider(b.toProvider(r, q)).String())
	back, _ = url.Parse(b.consent(r, page, nil).Header.Get("Location"))
	a = r.exchange(client, "http://127.0.0.1:9/cb", back.Query().Get("code"))
	if id, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now()); err != nil || id.Role != "viewer" {
		t.Errorf("a viewer asking for write got %+v %v", id, err)
	}
}

// Each way the provider's answer or the sign-in could be forged or
// misused is refused, and no code is issued.
func TestUpstreamSignInsThatDoNotCheckOutAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		claims map[string]any
		person string
		back   func(u *url.URL) // the answer as it comes back
		fresh  bool             // the answer reaches another browser
		want   string
	}{
		{name: "AnotherNonce", claims: map[string]any{"nonce": "not-this-one"}, want: "nonce"},
		{name: "NoNonce", claims: map[string]any{"nonce": nil}, want: "nonce"},
		{name: "AnotherAudience", claims: map[string]any{"aud": "someone-else"}, want: "ID token"},
		{name: "AnotherIssuer", claims: map[string]any{"iss": "https://evil.example.com"}, want: "ID token"},
		{name: "Expired", claims: map[string]any{"exp": time.Now().Add(-time.Hour).Unix(), "iat": time.Now().Add(-2 * time.Hour).Unix()}, want: "ID token"},
		{name: "SeveralAudiencesAnotherAuthorizedParty", claims: map[string]any{"aud": []string{"gateway-rp", "other"}, "azp": "other"}, want: "authorized party"},
		{name: "SomeoneWithNoRole", person: "stranger@test-idp", want: "has no role"},
		{name: "AnotherState", back: func(u *url.URL) { q := u.Query(); q.Set("state", q.Get("state")+"x"); u.RawQuery = q.Encode() }, want: "state"},
		{name: "AnIssOfAnotherServer", back: func(u *url.URL) { q := u.Query(); q.Set("iss", "https://evil.example.com"); u.RawQuery = q.Encode() }, want: "issuer"},
		{name: "AnErrorFromTheProvider", back: func(u *url.URL) {
			u.RawQuery = url.Values{"state": {u.Query().Get("state")}, "error": {"access_denied"}}.Encode()
		}, want: "access_denied"},
		{name: "InAnotherBrowser", fresh: true, want: "another browser"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, is := upstreamRig(t)
			is.IDTokenClaims = tc.claims
			if tc.person != "" {
				is.Subject = tc.person
			}
			client := r.register("http://127.0.0.1:9/cb")
			b := newBrowser(t)
			back := b.atProvider(b.toProvider(r, r.authorizeQuery(client, "http://127.0.0.1:9/cb")))
			if tc.back != nil {
				tc.back(back)
			}
			if tc.fresh {
				b = newBrowser(t)
			}
			resp, page := b.get(back.String())
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, tc.want) || strings.Contains(page, `name="login"`) {
				t.Fatalf("the callback: %d, want 400 naming %q:\n%s", resp.StatusCode, tc.want, page)
			}
			// The answer is spent: the same again is refused too.
			if resp, _ := b.get(back.String()); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("the answer again: %d", resp.StatusCode)
			}
		})
	}
}

// The sealed sign-in the consent form carries works for its own request
// only, unaltered.
func TestTheConsentFormsSignInIsBoundToItsRequest(t *testing.T) {
	r, _ := upstreamRig(t)
	client := r.register("http://127.0.0.1:9/cb", "http://127.0.0.1:9/other")
	b := newBrowser(t)
	_, page := b.get(b.atProvider(b.toProvider(r, r.authorizeQuery(client, "http://127.0.0.1:9/cb"))).String())
	for name, edit := range map[string]func(url.Values){
		"another state":        func(f url.Values) { f.Set("state", "other") },
		"another redirect URI": func(f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:9/other") },
		"another scope":        func(f url.Values) { f.Set("scope", "mcp:admin") },
		"an altered sign-in":   func(f url.Values) { f.Set("login", testkit.Tamper(f.Get("login"))) },
		"no sign-in":           func(f url.Values) { f.Del("login") },
	} {
		if resp := b.consent(r, page, edit); resp.StatusCode == http.StatusSeeOther {
			t.Errorf("%s: %d %q, want it refused", name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if resp := b.consent(r, page, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the form as it was: %d", resp.StatusCode)
	}
}

// The provider is the operator's (its issuer configured): its origin is
// reached whatever its address, but an endpoint its metadata names
// elsewhere goes out under the outbound policy — a token endpoint at
// 127.0.0.2 (a stand-in for an address inside the network, which fails
// the test if reached) is refused, and the sign-in with it.
func TestTheProvidersDiscoveredEndpointsAreUnderTheOutboundPolicy(t *testing.T) {
	r, is := upstreamRig(t)
	target, reached := egresstest.Forbidden(t)
	is.Metadata["token_endpoint"] = target + "/token"
	client := r.register("http://127.0.0.1:9/cb")
	b := newBrowser(t)
	resp, page := b.get(b.atProvider(b.toProvider(r, r.authorizeQuery(client, "http://127.0.0.1:9/cb"))).String())
	if resp.StatusCode == http.StatusOK && strings.Contains(page, `<strong id="person">`) {
		t.Errorf("the sign-in went through a token endpoint at a refused address:\n%s", page)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the refused token endpoint was reached %d times", n)
	}
}

// A grant made through the upstream provider lasts a day (UpstreamRecheck)
// however often it is refreshed: the person signs in at the provider
// again, which is asked whether they still may. Such grants slid forward
// at every refresh and were never checked at the provider again.
func TestAnUpstreamGrantIsCheckedAtTheProviderDaily(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r, _ := upstreamRig(t, func(c *authserver.Config) { c.Now = clock })
	client := r.register("http://127.0.0.1:9/cb")
	q := r.authorizeQuery(client, "http://127.0.0.1:9/cb")
	b := newBrowser(t)
	_, page := b.get(b.atProvider(b.toProvider(r, q)).String())
	back, _ := url.Parse(b.consent(r, page, nil).Header.Get("Location"))
	a := r.exchange(client, "http://127.0.0.1:9/cb", back.Query().Get("code"))
	if a.RefreshToken == "" {
		t.Fatalf("the exchange: %+v", a)
	}
	mu.Lock()
	now = now.Add(23 * time.Hour)
	mu.Unlock()
	if a = r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.RefreshToken}, "client_id": {client}}); a.AccessToken == "" {
		t.Fatalf("a refresh within the day: %+v", a)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if again := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.RefreshToken}, "client_id": {client}}); again.Error != "invalid_grant" {
		t.Errorf("a refresh a day after the provider's sign-in: %+v, want invalid_grant", again)
	}
}

// A grant's revocation, by an admin or by its client (RFC 7009), closes
// what Revoked gave for the person it acts for (their principal, as their
// access token names it), and nobody else's; the next watcher of the same
// person waits for the next revocation.
func TestRevokingAGrantTellsWhatIsHeldOpenForItsPerson(t *testing.T) {
	r, is := upstreamRig(t)
	client := r.register("http://127.0.0.1:9/cb")
	grant := func(who string) (mcp.Identity, string) {
		t.Helper()
		is.Subject = who
		b := newBrowser(t)
		_, page := b.get(b.atProvider(b.toProvider(r, r.authorizeQuery(client, "http://127.0.0.1:9/cb"))).String())
		back, _ := url.Parse(b.consent(r, page, nil).Header.Get("Location"))
		a := r.exchange(client, "http://127.0.0.1:9/cb", back.Query().Get("code"))
		id, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return id, a.RefreshToken
	}
	alice, _ := grant("person@test-idp")
	bob, bobRefresh := grant("viewer@test-idp")
	aliceGone, bobGone := r.srv.Revoked(alice.Principal), r.srv.Revoked(bob.Principal)
	if err := r.srv.RevokeGrant(context.Background(), alice.TokenID, mcp.Identity{Subject: "root", Role: "admin"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-aliceGone:
	default:
		t.Fatal("alice's grant revoked by an admin, and what is held open for her was not told")
	}
	select {
	case <-bobGone:
		t.Fatal("alice's revocation told bob's")
	default:
	}
	if again := r.srv.Revoked(alice.Principal); again == aliceGone {
		t.Error("a new watcher of alice got the closed channel")
	}
	form := url.Values{"token": {bobRefresh}, "client_id": {client}}
	resp, err := http.PostForm(r.http.URL+authserver.RevokePath, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-bobGone:
	default:
		t.Errorf("bob's grant revoked by its client (%d), and what is held open for him was not told", resp.StatusCode)
	}
}
