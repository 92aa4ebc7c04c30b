// personal_oauth_test.go: a per_user backend of oauth (issue 29, way 2):
// each person authorizes it themselves, and each call carries their own
// token, never another's.

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// poBackend is a backend that lets in only tokens its issuer minted for
// it, and whose whoami answers the bearer it was called with. It returns
// its MCP URL.
func poBackend(t *testing.T, is *oauthtest.Issuer) string {
	t.Helper()
	return is.Protect(t, httputilProxy(t, pvBackendOf(t, "Authorization")))
}

// poSignIn has the person whose console session is cookie authorize
// tickets from the page the gateway sent them to (page, a URL of the
// console), signing in at the authorization server as who. It returns
// the page the callback showed.
func poSignIn(t *testing.T, e *gwEnv, page, cookie, who string) string {
	t.Helper()
	body, err := poBrowse(e, page, cookie, who)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// poBrowse is poSignIn as a browser does it, on any goroutine.
func poBrowse(e *gwEnv, page, cookie, who string) (string, error) {
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.base)
	jar.SetCookies(u, []*http.Cookie{{Name: strings.Split(cookie, "=")[0], Value: strings.SplitN(cookie, "=", 2)[1]}})
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasSuffix(req.URL.Path, "/authorize") && req.URL.Query().Get("login_hint") == "" && req.URL.Host != u.Host {
			q := req.URL.Query()
			q.Set("login_hint", who) // the person signs in as themselves
			req.URL.RawQuery = q.Encode()
		}
		return nil
	}}
	resp, err := browser.Get(page)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/oauth/callback" {
		return "", fmt.Errorf("%s's callback: %d at %s\n%s", who, resp.StatusCode, resp.Request.URL, body)
	}
	return string(body), nil
}

// Two people reach one per_user backend of oauth. The first person's
// call, before they authorized it, is answered -32042 with the page that
// begins their authorization (a URL elicitation), and the tool is listed
// to them all the same once anyone has authorized it. Each signs in as
// themselves from that page; a browser that did not begin it cannot
// finish it. Then both call at once, in both eras, and the backend sees
// each caller's own token on every call. The audit names the token's
// subject; revoking one person's authorization (My credentials) revokes
// it at the authorization server and refuses their next call, not the
// other's. No token reaches the log, and the store holds them sealed.
func TestEachPersonAuthorizesAnOAuthBackendThemselves(t *testing.T) {
	t.Setenv(pvKeyEnv, strings.Repeat("5a", 32))
	is := oauthtest.New(t, "")
	backend := poBackend(t, is)
	e := gwStart(t, "listen: 127.0.0.1:0\nvault: {key_from: "+pvKeyEnv+"}\n"+boLoopbackIdP+"backends:\n"+
		"  - {name: tickets, kind: http, url: "+strconv.Quote(backend)+", identity: per_user, credential: {oauth: {}}}\n")
	e.gw.Listening(strings.TrimPrefix(e.base, "http://"))
	bkRun(t, e.gw)
	ctx := testkit.Context(t)
	alice, aliceID := e.token("alice", "viewer")
	bob, _ := e.token("bob", "viewer")
	aliceCookie, bobCookie := adminLogin(t, e, alice), adminLogin(t, e, bob)
	page := e.base + "/admin/credentials/authorize?backend=tickets"

	_, mine := adminDo(t, e, "GET", "/admin/credentials", nil, map[string]string{"Cookie": aliceCookie})
	if !strings.Contains(mine, "Not authorized") || !strings.Contains(mine, `href="/admin/credentials/authorize?backend=tickets"`) {
		t.Fatalf("alice's My credentials before she authorized tickets:\n%s", mine)
	}
	// A browser that did not begin alice's authorization cannot finish it.
	link, _ := boStartAuthorization(t, e, strings.TrimPrefix(page, e.base), map[string]string{"Cookie": aliceCookie})
	resp, err := http.Get(link + "&login_hint=mallory")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("alice's link finished in another browser: %d", resp.StatusCode)
	}
	if got := poSignIn(t, e, page, aliceCookie, "alice"); !strings.Contains(got, "acts as you now") {
		t.Fatalf("alice's callback page:\n%s", got)
	}
	_, mine = adminDo(t, e, "GET", "/admin/credentials", nil, map[string]string{"Cookie": aliceCookie})
	if !strings.Contains(mine, "Authorized") || !strings.Contains(mine, "Revoke my authorization") {
		t.Errorf("alice's My credentials after she authorized tickets:\n%s", mine)
	}

	clients := map[string]*mcp.Client{
		"alice 2025": pvConnect(t, e.base, gwBearer(alice), mcp.EraSession), "alice 2026": pvConnect(t, e.base, gwBearer(alice), mcp.EraSessionless),
		"bob 2025": pvConnect(t, e.base, gwBearer(bob), mcp.EraSession), "bob 2026": pvConnect(t, e.base, gwBearer(bob), mcp.EraSessionless),
	}
	testkit.WaitFor(t, "whoami listed to bob, who has not authorized tickets", func() bool {
		res, err := clients["bob 2026"].Call(ctx, "tools/list", nil)
		return err == nil && strings.Contains(string(res), `"tickets__whoami"`)
	})
	_, err = gwCallTool(ctx, clients["bob 2025"], "tickets__whoami", nil)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeURLElicitationRequired || !strings.Contains(je.Message, page) ||
		!strings.Contains(string(je.Data), `"mode":"url"`) || !strings.Contains(string(je.Data), `"url":"`+strings.ReplaceAll(page, "&", `\u0026`)+`"`) &&
		!strings.Contains(string(je.Data), `"url":"`+page+`"`) {
		t.Fatalf("bob's call before he authorized tickets: %v %s, want -32042 with the page that begins it", err, je.Data)
	}
	poSignIn(t, e, page, bobCookie, "bob")
	if n := is.ClientCount(); n != 1 {
		t.Errorf("the gateway registered %d clients for two people, want one they share", n)
	}

	var wg sync.WaitGroup
	for name, c := range clients {
		want := strings.Fields(name)[0]
		wg.Go(func() {
			for range 20 {
				res, err := gwCallTool(ctx, c, "tickets__whoami", nil)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				if got := pxBearer(t, pvText(t, res)); got["sub"] != want || got["aud"] != backend {
					t.Errorf("%s reached the backend with a token of %v for %v", name, got["sub"], got["aud"])
					return
				}
			}
		})
	}
	wg.Wait()

	// Bob revokes his: the authorization server is told, his next call
	// is refused with the page again, and alice's still goes through.
	_, mine = adminDo(t, e, "GET", "/admin/credentials", nil, map[string]string{"Cookie": bobCookie})
	csrf := adminCSRF.FindStringSubmatch(mine)[1]
	resp, _ = adminDo(t, e, "POST", "/admin/credentials/revoke", url.Values{"csrf": {csrf}, "backend": {"tickets"}},
		map[string]string{"Cookie": bobCookie, "Origin": e.base})
	if resp.StatusCode != http.StatusSeeOther || len(is.RevokedTokens()) != 1 {
		t.Fatalf("bob's revocation: %d, %d tokens revoked at the authorization server", resp.StatusCode, len(is.RevokedTokens()))
	}
	if _, err := gwCallTool(ctx, clients["bob 2026"], "tickets__whoami", nil); !errors.As(err, &je) || je.Code != mcp.CodeURLElicitationRequired {
		t.Errorf("bob's call after he revoked: %v, want -32042", err)
	}
	if res, err := gwCallTool(ctx, clients["alice 2026"], "tickets__whoami", nil); err != nil || pxBearer(t, pvText(t, res))["sub"] != "alice" {
		t.Errorf("alice's call after bob revoked: %s %v", res, err)
	}

	sealed, err := e.store.PersonalCredential(ctx, aliceID, "tickets")
	if err != nil || len(sealed) == 0 || strings.Contains(string(sealed), "access") {
		t.Errorf("alice's stored authorization: %d bytes, %v (sealed?)", len(sealed), err)
	}
	logs := e.logs.String()
	for _, tok := range strings.Fields(logs) {
		if oauthtest.Claim(strings.Trim(tok, `",}`), "sub") != "" {
			t.Fatalf("a token reached the log: %s", tok)
		}
	}
	as := pvAudited(t, e)
	if as["alice ok oauth:alice"] != 41 || as["bob ok oauth:bob"] != 40 || as["bob error "] != 2 {
		t.Errorf("audited whoami calls by caller, outcome and upstream identity: %v", as)
	}
}

// A client of a 2025 session that declared URL-mode elicitation is asked
// on the call's own stream to open the page that begins the caller's
// authorization. Once they accept, and sign in, the same call goes on with
// their token, and the client is told the elicitation completed.
func TestAPersonIsAskedToAuthorizeByAURLElicitationAndTheCallGoesOn(t *testing.T) {
	t.Setenv(pvKeyEnv, strings.Repeat("5a", 32))
	is := oauthtest.New(t, "")
	e := gwStart(t, "listen: 127.0.0.1:0\nvault: {key_from: "+pvKeyEnv+"}\n"+boLoopbackIdP+"backends:\n"+
		"  - {name: tickets, kind: http, url: "+strconv.Quote(poBackend(t, is))+", identity: per_user, credential: {oauth: {}}}\n")
	e.gw.Listening(strings.TrimPrefix(e.base, "http://"))
	bkRun(t, e.gw)
	ctx := testkit.Context(t)
	alice, _ := e.token("alice", "viewer")
	carol, _ := e.token("carol", "viewer")
	page := e.base + "/admin/credentials/authorize?backend=tickets"
	poSignIn(t, e, page, adminLogin(t, e, alice), "alice") // the backend is listed from now on
	carolCookie := adminLogin(t, e, carol)

	asked := make(chan string, 1)
	signedIn := make(chan error, 1)
	completed := make(chan string, 1)
	conn, err := mcphttp.DialStreamable(ctx, e.base+"/mcp", mcphttp.ClientOptions{Header: http.Header{"Authorization": {gwBearer(carol)}}})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Capabilities: json.RawMessage(`{"elicitation":{"form":{},"url":{}}}`),
		OnRequest: func(_ context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
			var p struct{ Mode, URL, ElicitationID string }
			if m.Method != "elicitation/create" || json.Unmarshal(m.Params, &p) != nil || p.Mode != "url" {
				return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "not this", nil)
			}
			asked <- p.URL
			go func() { // the person opens the page once the client has answered
				_, err := poBrowse(e, p.URL, carolCookie, "carol")
				signedIn <- err
			}()
			return json.RawMessage(`{"action":"accept"}`), nil
		},
		OnNotification: func(m *jsonrpc.Message) {
			if m.Method == "notifications/elicitation/complete" {
				id, _ := jsonrpc.LookupString(m.Params, "elicitationId")
				completed <- id
			}
		}})
	t.Cleanup(func() { c.Close() })
	if _, err := c.Connect(ctx, mcp.EraSession); err != nil {
		t.Fatal(err)
	}
	if got := pxBearer(t, pvWhoami(t, c))["sub"]; got != "carol" {
		t.Fatalf("carol's call went on as %v", got)
	}
	if got := <-asked; got != page {
		t.Errorf("the elicitation's URL: %q, want %q", got, page)
	}
	if err := <-signedIn; err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-completed:
		if id == "" {
			t.Error("notifications/elicitation/complete names no elicitation")
		}
	default:
		t.Error("the client was not told the elicitation completed")
	}
}
