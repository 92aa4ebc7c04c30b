package gateway_test

// backend_oauth_test.go holds the gateway as an OAuth client of a backend
// that demands access tokens, over real HTTP: the backend (the reference
// engine behind a bearer check) answers 401 with its resource metadata,
// which names a test authorization server (internal/oauthtest); the
// gateway registers there and logs the link an admin opens, which the
// console shows too; the authorization server sends the admin back to
// the gateway's callback; the backend then comes up with the gateway's
// token, never the caller's, and the token is sealed in the store.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// boBackend is an MCP server that takes only access tokens its issuer
// minted for it.
type boBackend struct {
	srv  *httptest.Server
	url  string // its MCP URL, the resource
	mu   sync.Mutex
	seen []string // every Authorization header it was sent
}

func newBOBackend(t *testing.T, is *oauthtest.Issuer) *boBackend {
	t.Helper()
	back := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "bo-back", Version: "1"}})
	if err := back.AddTools(&mcp.Tool{Name: "ping", Handler: func(_ context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("pong")}})
	}}); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(back, mcphttp.Options{})
	b := &boBackend{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": b.url, "authorization_servers": []string{is.ID}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.seen = append(b.seen, r.Header.Get("Authorization"))
		b.mu.Unlock()
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || oauthtest.Claim(tok, "aud") != b.url {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+b.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	b.srv = httptest.NewServer(mux)
	b.url = b.srv.URL + "/mcp"
	t.Cleanup(func() { h.Close(); b.srv.CloseClientConnections(); b.srv.Close() })
	return b
}

// boKeyFile is a file holding a fresh oauth_client key, as hex.
func boKeyFile(t *testing.T) string {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	return keyFile
}

var boAuthorizeLink = regexp.MustCompile(`class="authorize" href="([^"]+)"`)

// boStartAuthorization opens the console's authorization route as the
// admin (hdr: their cookie or bearer) and returns where it sends the
// browser, and a browser holding the binding cookie it set.
func boStartAuthorization(t *testing.T, e *gwEnv, consoleLink string, hdr map[string]string) (string, *http.Client) {
	t.Helper()
	resp, _ := adminDo(t, e, "GET", consoleLink, nil, hdr)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the console's authorization route: %d", resp.StatusCode)
	}
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.base)
	jar.SetCookies(u, resp.Cookies())
	return resp.Header.Get("Location"), &http.Client{Jar: jar}
}

func TestABackendThatDemandsOAuthIsAuthorizedOnceByAnAdmin(t *testing.T) {
	is := oauthtest.New(t, "")
	back := newBOBackend(t, is)
	keyFile := boKeyFile(t)
	e := gwStart(t, "backends:\n  - {name: x, kind: http, url: \""+back.url+"\"}\noauth_client: {key_file: \""+keyFile+"\"}\n"+boLoopbackIdP)
	e.gw.Listening(strings.TrimPrefix(e.base, "http://"))
	bkRun(t, e.gw)
	admin, _ := e.token("root", "admin")
	cookie := adminLogin(t, e, admin)

	// The console offers the authorization, at its own route; the log
	// names that route, never the link (whose state completes it).
	var consoleLink string
	for deadline := time.Now().Add(10 * time.Second); consoleLink == ""; {
		_, body := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie})
		if m := boAuthorizeLink.FindStringSubmatch(body); m != nil {
			consoleLink = html.UnescapeString(m[1])
		} else if time.Now().After(deadline) {
			t.Fatalf("the console shows no authorization link:\n%s", body)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if consoleLink != "/admin/backends/authorize?name=x" || !strings.Contains(e.logs.String(), `"open":"`+e.base+consoleLink) ||
		strings.Contains(e.logs.String(), "state=") {
		t.Fatalf("the console's link %q; the log (which must name it and no state):\n%s", consoleLink, e.logs.String())
	}
	link, _ := boStartAuthorization(t, e, consoleLink, map[string]string{"Cookie": cookie})
	if !strings.HasPrefix(link, is.ID+"/authorize?") {
		t.Fatalf("the console sent the browser to %q", link)
	}

	// A forged answer is refused with a page, and changes nothing; so is
	// the real answer in a browser that did not open it from the console
	// (a link read from a log, sent to someone else).
	for _, q := range []string{"state=" + base64.RawURLEncoding.EncodeToString([]byte("x")) + ".forged&code=c", "state=nobackend&code=c", ""} {
		rep := e.do(gwRequest{method: http.MethodGet, path: "/oauth/callback?" + q})
		if (rep.status != http.StatusBadRequest && rep.status != http.StatusForbidden) || !strings.Contains(string(rep.body), "Not authorized") {
			t.Errorf("callback ?%s: %d %s", q, rep.status, rep.body)
		}
	}
	resp, err := http.Get(link) // another browser: no binding cookie
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(page), "from the console") {
		t.Fatalf("the answer in a browser that did not ask: %d\n%s", resp.StatusCode, page)
	}
	link, binding := boStartAuthorization(t, e, consoleLink, map[string]string{"Cookie": cookie}) // the code was spent: again

	// The admin's browser follows the link: the authorization server
	// approves and sends it to the gateway's callback, with the binding.
	resp, err = binding.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Authorized") || resp.Request.URL.Path != "/oauth/callback" {
		t.Fatalf("the callback after the authorization: %d at %s\n%s", resp.StatusCode, resp.Request.URL, page)
	}

	c := e.dial(gwStreamable, gwBearer(admin))
	trWaitTool(t, c, "x__ping")
	res, err := gwCallTool(testkit.Context(t), c, "x__ping", nil)
	if err != nil || !strings.Contains(string(res), "pong") {
		t.Fatalf("x__ping: %s %v", res, err)
	}
	back.mu.Lock()
	for _, h := range back.seen {
		if strings.Contains(h, "mcpg_") {
			t.Errorf("the backend was sent the caller's credential: %q", h)
		}
	}
	back.mu.Unlock()
	if _, body := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie}); !strings.Contains(body, "OAuth: authorized at &#34;"+is.ID+"&#34;") {
		t.Errorf("the console after the authorization:\n%s", body)
	}
	sealed, err := e.store.BackendCredential(testkit.Context(t), "x")
	if err != nil || len(sealed) == 0 {
		t.Fatalf("the stored record: %d bytes, %v", len(sealed), err)
	}
	back.mu.Lock()
	last := strings.TrimPrefix(back.seen[len(back.seen)-1], "Bearer ")
	back.mu.Unlock()
	if strings.Contains(string(sealed), last) || strings.Contains(string(sealed), "client_id") {
		t.Error("the store holds the backend's token in the clear")
	}

	// The admin makes the gateway forget it: the token is revoked at the
	// authorization server, the backend restarts without one, and the
	// console asks for a new authorization.
	_, body := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie})
	m := adminCSRF.FindStringSubmatch(body)
	if m == nil || !strings.Contains(body, "Forget authorization") {
		t.Fatalf("the console offers no Forget authorization:\n%s", body)
	}
	resp, _ = adminDo(t, e, "POST", "/admin/backends/forget-oauth", url.Values{"csrf": {m[1]}, "name": {"x"}},
		map[string]string{"Cookie": cookie, "Origin": e.base})
	var flash string
	for _, c := range resp.Cookies() {
		if c.Name == "mcpgate_flash" {
			flash = c.Name + "=" + c.Value
		}
	}
	if resp.StatusCode != http.StatusSeeOther || flash == "" {
		t.Fatalf("forget: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, page := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie + "; " + flash}); !strings.Contains(page, "revoked at its authorization server") {
		t.Errorf("the page after Forget does not say the tokens were revoked")
	}
	if revoked := is.RevokedTokens(); len(revoked) != 1 {
		t.Errorf("the authorization server was asked to revoke %q", revoked)
	}
	testkit.WaitFor(t, "a new link on the console", func() bool {
		_, body := adminDo(t, e, "GET", "/admin/", nil, map[string]string{"Cookie": cookie})
		return boAuthorizeLink.MatchString(body)
	})
	if err := e.closeGateway(context.Background()); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range gwTail(t, e.store) {
		found = found || rec.Kind == "oauth" && rec.Name == "forget-backend" && rec.Backend == "x" && rec.Subject == "root"
	}
	if !found {
		t.Error("the audit log has no oauth/forget-backend record of root's")
	}
}

// The admin's answer may land on another replica than the one that made
// the link: replicas that share the store and the oauth_client key sign
// states alike, so the other one completes the authorization, and its
// backend comes up with the token.
func TestTheAuthorizationCompletesOnAnotherReplica(t *testing.T) {
	is := oauthtest.New(t, "")
	back := newBOBackend(t, is)
	keyFile := boKeyFile(t)
	// Replicas that share console sessions (the session key) share the
	// binding of an authorization to the admin's browser.
	t.Setenv(config.SessionKeyEnv, strings.Repeat("ef", 32))
	yaml := "backends:\n  - {name: x, kind: http, url: \"" + back.url + "\"}\noauth_client: {key_file: \"" + keyFile + "\"}\n" + boLoopbackIdP
	a := gwStart(t, yaml)
	a.gw.Listening(strings.TrimPrefix(a.base, "http://"))
	bkRun(t, a.gw)
	openRE := regexp.MustCompile(`"open":"([^"]+)"`)
	testkit.WaitFor(t, "replica a's console link in its log", func() bool { return openRE.MatchString(a.logs.String()) })
	root, _ := a.token("root", "admin")
	link, binding := boStartAuthorization(t, a, "/admin/backends/authorize?name=x", map[string]string{"Authorization": "Bearer " + root})

	ctx := testkit.Context(t)
	st, err := sqlite.Open(ctx, a.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b, err := gateway.New(ctx, a.cfg, gateway.Options{Store: st, Logger: slog.New(slog.DiscardHandler),
		Info: mcp.Implementation{Name: "replica-b", Version: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	bBase := bkServe(t, b)

	// The authorization server sends the browser to replica a's callback;
	// a load balancer sends it to b.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back2a, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back2a.Path != "/oauth/callback" {
		t.Fatalf("the authorization server's answer: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	req, _ := http.NewRequest(http.MethodGet, bBase+"/oauth/callback?"+back2a.RawQuery, nil)
	aURL, _ := url.Parse(a.base + "/oauth/callback")
	for _, c := range binding.Jar.Cookies(aURL) { // the browser's binding, brought to b by the load balancer
		req.AddCookie(c)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Authorized") {
		t.Fatalf("replica b's callback: %d\n%s", resp.StatusCode, page)
	}
	admin := mcp.WithIdentity(ctx, mcp.Identity{Subject: "t", Role: "admin"})
	testkit.WaitFor(t, "x__ping on replica b", func() bool {
		for _, e := range b.Server().Catalogue(admin) {
			if e.Name == "x__ping" {
				return true
			}
		}
		return false
	})
}

// boLoopbackIdP allows the authorization servers of these tests, which
// are on this machine, as an operator allows one inside their network.
const boLoopbackIdP = "outbound: {allow_hosts: [127.0.0.1]}\n"
