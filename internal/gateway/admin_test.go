package gateway_test

// admin_test.go holds the admin console to who may use it and how a
// change reaches it, over real HTTP against a gateway built as the command
// builds it: admins only (by bearer or by the console's cookie), a login
// that keeps no token, and no change without the session's CSRF token
// from the console's own origin. The browser tests are cmd/mcpgate's.

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// adminDo sends one request to the console without following redirects.
func adminDo(t *testing.T, e *gwEnv, method, path string, form url.Values, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(testkit.Context(t), method, e.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var adminCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// adminLogin logs in with secret and returns the session cookie.
func adminLogin(t *testing.T, e *gwEnv, secret string) string {
	t.Helper()
	resp, _ := adminDo(t, e, "POST", "/admin/login", url.Values{"token": {secret}}, map[string]string{"Origin": e.base})
	for _, c := range resp.Cookies() {
		if c.Name == "mcpgate_admin" && c.Value != "" {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("login: %d, no session cookie", resp.StatusCode)
	return ""
}

func TestAdminConsoleIsForAdminsOnly(t *testing.T) {
	e := gwStart(t, "")
	admin, _ := e.token("ops", "admin")
	viewer, _ := e.token("reader", "viewer")
	_, victim := e.token("ci", "editor")
	same := map[string]string{"Origin": e.base}

	t.Run("no credential: the login page", func(t *testing.T) {
		resp, _ := adminDo(t, e, "GET", "/admin/tokens", nil, nil)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/admin/login?next=%2Fadmin%2Ftokens" {
			t.Errorf("GET /admin/tokens: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		resp, body := adminDo(t, e, "GET", "/admin/login", nil, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `type="password"`) {
			t.Errorf("the login page: %d", resp.StatusCode)
		}
	})
	t.Run("a viewer's bearer is refused, naming the role", func(t *testing.T) {
		resp, body := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Authorization": "Bearer " + viewer})
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "role is viewer") {
			t.Errorf("viewer: %d %s", resp.StatusCode, body)
		}
		resp, _ = adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Authorization": "Bearer mcpg_not-a-token"})
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a bad bearer: %d", resp.StatusCode)
		}
		if resp, _ := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Authorization": "Bearer " + admin}); resp.StatusCode != http.StatusOK {
			t.Errorf("an admin's bearer: %d", resp.StatusCode)
		}
	})
	t.Run("a viewer's token does not log in", func(t *testing.T) {
		resp, body := adminDo(t, e, "POST", "/admin/login", url.Values{"token": {viewer}}, same)
		if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 || !strings.Contains(body, "role is viewer") {
			t.Errorf("viewer login: %d cookies %v", resp.StatusCode, resp.Cookies())
		}
		if strings.Contains(body, viewer) {
			t.Error("the login page echoes the token")
		}
		resp, _ = adminDo(t, e, "POST", "/admin/login", url.Values{"token": {"mcpg_wrong"}}, same)
		if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
			t.Errorf("a wrong token: %d cookies %v", resp.StatusCode, resp.Cookies())
		}
		resp, _ = adminDo(t, e, "POST", "/admin/login", url.Values{"token": {admin}}, map[string]string{"Origin": "http://localhost:1"})
		if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Errorf("a login from another origin: %d cookies %v", resp.StatusCode, resp.Cookies())
		}
	})

	t.Run("an admin's login: a cookie that holds no token", func(t *testing.T) {
		resp, _ := adminDo(t, e, "POST", "/admin/login", url.Values{"token": {admin}}, same)
		var ck *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == "mcpgate_admin" {
				ck = c
			}
		}
		if resp.StatusCode != http.StatusSeeOther || ck == nil {
			t.Fatalf("login: %d", resp.StatusCode)
		}
		if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/admin" || strings.Contains(ck.Value, admin) {
			t.Errorf("cookie %+v", ck)
		}
	})

	cookie := adminLogin(t, e, admin)
	_, page := adminDo(t, e, "GET", "/admin/tokens", nil, map[string]string{"Cookie": cookie})
	m := adminCSRF.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the tokens page has no CSRF field:\n%s", page)
	}
	csrf := m[1]
	revoke := func(t *testing.T, hdr map[string]string, form url.Values) int {
		t.Helper()
		resp, _ := adminDo(t, e, "POST", "/admin/tokens/revoke", form, hdr)
		return resp.StatusCode
	}
	active := func() bool {
		for _, tok := range e.gw.Tokens().List() {
			if tok.ID == victim {
				return tok.RevokedAt.IsZero()
			}
		}
		return false
	}
	for _, c := range []struct {
		name string
		hdr  map[string]string
		form url.Values
	}{
		{"no cookie", map[string]string{"Origin": e.base}, url.Values{"id": {victim}, "csrf": {csrf}}},
		{"no CSRF token", map[string]string{"Cookie": cookie, "Origin": e.base}, url.Values{"id": {victim}}},
		{"another session's CSRF token", map[string]string{"Cookie": cookie, "Origin": e.base}, url.Values{"id": {victim}, "csrf": {"x" + csrf}}},
		{"another origin (loopback, which the DNS-rebinding guard lets by)", map[string]string{"Cookie": cookie, "Origin": "http://127.0.0.1:1"}, url.Values{"id": {victim}, "csrf": {csrf}}},
		{"another site, no Origin", map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "cross-site"}, url.Values{"id": {victim}, "csrf": {csrf}}},
	} {
		t.Run("a change with "+c.name+" is refused", func(t *testing.T) {
			if got := revoke(t, c.hdr, c.form); got != http.StatusForbidden || !active() {
				t.Errorf("revoke: %d, token active %v; want 403 and still active", got, active())
			}
		})
	}
	t.Run("a change from the console is made", func(t *testing.T) {
		if got := revoke(t, map[string]string{"Cookie": cookie, "Origin": e.base}, url.Values{"id": {victim}, "csrf": {csrf}}); got != http.StatusSeeOther || active() {
			t.Errorf("revoke: %d, token active %v; want 303 and revoked", got, active())
		}
	})
	t.Run("every string is escaped", func(t *testing.T) {
		resp, body := adminDo(t, e, "POST", "/admin/tokens", url.Values{"csrf": {csrf}, "name": {`<script>alert("x")</script>`}, "role": {"viewer"}},
			map[string]string{"Cookie": cookie, "Origin": e.base})
		if resp.StatusCode != http.StatusOK || strings.Contains(body, `<script>alert`) || !strings.Contains(body, "&lt;script&gt;alert(") {
			t.Errorf("a token named with markup: %d\n%s", resp.StatusCode, body)
		}
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("CSP %q", resp.Header.Get("Content-Security-Policy"))
		}
	})
	t.Run("a revoked token's session ends", func(t *testing.T) {
		secret, id := e.token("second admin", "admin")
		ck := adminLogin(t, e, secret)
		if resp, _ := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": ck}); resp.StatusCode != http.StatusOK {
			t.Fatalf("before the revocation: %d", resp.StatusCode)
		}
		if err := e.gw.Tokens().Revoke(testkit.Context(t), id); err != nil {
			t.Fatal(err)
		}
		if resp, _ := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": ck}); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("after the revocation: %d, want the login page", resp.StatusCode)
		}
	})
}
