// personal_test.go: a per_user backend with a vault (issue 29, way 3)
// sees each caller's own stored key, and nobody else's.

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// pvKeyEnv holds the test's vault key.
const pvKeyEnv = "MCPGATE_TEST_VAULT_KEY"

// pvBackend serves a tool whoami answering the X-Api-Key the request that
// carried it arrived with (over Streamable HTTP, both eras).
func pvBackend(t *testing.T) string { return pvBackendOf(t, "X-Api-Key") }

// pvBackendOf is pvBackend answering the header named.
func pvBackendOf(t *testing.T, header string) string {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "tickets", Version: "1"}})
	whoami := func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		id, _ := mcp.IdentityFrom(ctx)
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(id.Subject)}})
	}
	if err := s.AddTools(&mcp.Tool{Name: "whoami", Description: "Says whose key called.", Handler: whoami}); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(s, mcphttp.Options{Sessionless: true})
	t.Cleanup(h.Close)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(mcp.WithIdentity(r.Context(), mcp.Identity{Subject: "key=" + r.Header.Get(header)})))
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// pvText is the text of a tools/call result.
func pvText(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var r mcp.CallToolResult
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("result %s: %v", res, err)
	}
	return r.Content[0].Text
}

// Two people call one per_user backend at once, 2025 and 2026-07-28
// clients each: every call reaches it with the caller's own key. Before
// storing one, a person sees the tool listed and a call answered how to
// get one (-32042, not -32603). A replaced key counts from the next call,
// a deleted one too; no key reaches the log.
func TestEachPersonReachesAPerUserBackendWithTheirOwnKey(t *testing.T) {
	t.Setenv(pvKeyEnv, strings.Repeat("5a", 32))
	url := pvBackend(t)
	e := gwStart(t, "listen: 127.0.0.1:0\nvault: {key_from: "+pvKeyEnv+"}\nbackends:\n"+
		"  - {name: tickets, kind: http, url: "+strconv.Quote(url)+", identity: per_user, credential: {vault: {header: X-Api-Key}}}\n")
	bkRun(t, e.gw)
	e.gw.Listening(strings.TrimPrefix(e.base, "http://"))
	ctx := testkit.Context(t)
	alice, aliceID := e.token("alice", "viewer")
	bob, bobID := e.token("bob", "viewer")
	clients := map[string]*mcp.Client{}
	for _, who := range []struct {
		name, secret string
		era          mcp.Era
	}{{"alice 2025", alice, mcp.EraSession}, {"alice 2026", alice, mcp.EraSessionless}, {"bob 2025", bob, mcp.EraSession}, {"bob 2026", bob, mcp.EraSessionless}} {
		conn, err := mcphttp.DialStreamable(ctx, e.base+"/mcp", mcphttp.ClientOptions{Header: http.Header{"Authorization": {gwBearer(who.secret)}}})
		if err != nil {
			t.Fatal(err)
		}
		c := mcp.NewClient(conn, mcp.ClientOptions{})
		t.Cleanup(func() { c.Close() })
		if _, err := c.Connect(ctx, who.era); err != nil {
			t.Fatal(err)
		}
		clients[who.name] = c
	}
	testkit.WaitFor(t, "whoami listed to alice, who stored no key yet", func() bool {
		res, err := clients["alice 2025"].Call(ctx, "tools/list", nil)
		return err == nil && strings.Contains(string(res), `"tickets__whoami"`)
	})
	_, err := gwCallTool(ctx, clients["alice 2026"], "tickets__whoami", nil)
	var je *jsonrpc.Error
	page := e.base + "/admin/credentials"
	if !errors.As(err, &je) || je.Code != mcp.CodeURLElicitationRequired || !strings.Contains(je.Message, page) ||
		!strings.Contains(string(je.Data), `"kind":"credential_required"`) || !strings.Contains(string(je.Data), `"mode":"url"`) ||
		!strings.Contains(string(je.Data), `"url":"`+page+`"`) {
		t.Fatalf("a call before storing a key: %v %s, want -32042 with the My credentials page as a URL elicitation", err, je.Data)
	}

	creds := e.gw.Credentials()
	if err := creds.Set(ctx, aliceID, "tickets", "sk-alice-1"); err != nil {
		t.Fatal(err)
	}
	if err := creds.Set(ctx, bobID, "tickets", "sk-bob-1"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for name, c := range clients {
		want := "key=sk-" + strings.Fields(name)[0] + "-1"
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				res, err := gwCallTool(ctx, c, "tickets__whoami", nil)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				if got := pvText(t, res); got != want {
					t.Errorf("%s reached the backend as %q, want %q", name, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()

	if err := creds.Set(ctx, aliceID, "tickets", "sk-alice-2"); err != nil {
		t.Fatal(err)
	}
	if err := creds.Delete(ctx, bobID, "tickets"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice 2025", "alice 2026"} {
		res, err := gwCallTool(ctx, clients[name], "tickets__whoami", nil)
		if err != nil || pvText(t, res) != "key=sk-alice-2" {
			t.Errorf("%s after replacing her key: %s %v", name, res, err)
		}
	}
	for _, name := range []string{"bob 2025", "bob 2026"} {
		if _, err := gwCallTool(ctx, clients[name], "tickets__whoami", nil); !errors.As(err, &je) || je.Code != mcp.CodeURLElicitationRequired {
			t.Errorf("%s after deleting his key: %v, want -32042", name, err)
		}
	}
	if logs := e.logs.String(); strings.Contains(logs, "sk-alice") || strings.Contains(logs, "sk-bob") {
		t.Error("a stored key reached the log")
	}
	// The audit names whom each call was made as at the backend: the
	// caller's stored key, for the calls that had one.
	as := pvAudited(t, e)
	if as["alice ok vault:tickets"] != 82 || as["bob ok vault:tickets"] != 80 || as["alice error "] != 1 || as["bob error "] != 2 {
		t.Errorf("audited whoami calls by caller, outcome and upstream identity: %v", as)
	}
}

// pvRoleStdio makes the test binary a stdio server whose whoami answers
// the API_KEY it was started with, and its process id.
const pvRoleStdio = "personal-stdio"

func pvStdioServer() *mcp.Server {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "tickets", Version: "1"}})
	_ = s.AddTools(&mcp.Tool{Name: "whoami", Description: "Says whose key started it.", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("key=" + os.Getenv("API_KEY") + " pid=" + strconv.Itoa(os.Getpid()))}})
	}})
	return s
}

// A stdio per_user backend runs one child per person, started with their
// own key in the variable the configuration names; revoking a person's
// token ends their child, and the other person's runs on.
func TestAPerUserStdioBackendRunsAChildPerPersonUntilTheyAreRevoked(t *testing.T) {
	t.Setenv(pvKeyEnv, strings.Repeat("5a", 32))
	t.Setenv("PV_CHILD_ROLE", pvRoleStdio)
	e := gwStart(t, "listen: 127.0.0.1:0\nvault: {key_from: "+pvKeyEnv+"}\nbackends:\n"+
		"  - {name: tickets, kind: stdio, command: ["+strconv.Quote(os.Args[0])+"], env_from: {"+bkChildEnv+": PV_CHILD_ROLE},"+
		" identity: per_user, credential: {vault: {env: API_KEY}}}\n")
	bkRun(t, e.gw)
	ctx := testkit.Context(t)
	pids := map[string]int{}
	for _, name := range []string{"alice", "bob"} {
		secret, id := e.token(name, "viewer")
		if err := e.gw.Credentials().Set(ctx, id, "tickets", "sk-"+name); err != nil {
			t.Fatal(err)
		}
		var pid int
		got := pvWhoami(t, e.dial(gwStreamable, gwBearer(secret)))
		if _, err := fmt.Sscanf(got, "key=sk-"+name+" pid=%d", &pid); err != nil {
			t.Fatalf("%s's child says %q, want her own key", name, got)
		}
		pids[name] = pid
	}
	if pids["alice"] == pids["bob"] {
		t.Fatalf("one child (%d) for two people", pids["alice"])
	}
	for _, tok := range e.gw.Tokens().List() {
		if tok.Name == "alice" {
			if err := e.gw.Tokens().Revoke(ctx, tok.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	testkit.WaitFor(t, "alice's child ended", func() bool { return syscall.Kill(pids["alice"], 0) != nil })
	if err := syscall.Kill(pids["bob"], 0); err != nil {
		t.Errorf("bob's child ended with alice's revocation: %v", err)
	}
}

// A person of any role logs in to the console where a backend acts as
// each caller, and gets My credentials only: they store their key (the
// page never shows it, and their next call uses it), see it stored, and
// delete it; the admin's pages stay refused; each change is audited
// without the value. Without a per_user backend a viewer still cannot
// log in (TestAdminConsoleIsForAdminsOnly).
func TestAPersonStoresTheirOwnKeyOnMyCredentials(t *testing.T) {
	t.Setenv(pvKeyEnv, strings.Repeat("5a", 32))
	t.Setenv(pxSecretEnv, "unused")
	e := gwStart(t, "listen: 127.0.0.1:0\nvault: {key_from: "+pvKeyEnv+"}\nbackends:\n"+
		"  - {name: tickets, kind: http, url: "+strconv.Quote(pvBackend(t))+", identity: per_user, credential: {vault: {header: X-Api-Key}}}\n"+
		"  - {name: exchanged, kind: http, url: \"http://127.0.0.1:1/mcp\", identity: per_user, credential: {exchange: {token_url: \"http://127.0.0.1:1/token\", client_id: gw, client_secret_from: "+pxSecretEnv+"}}}\n")
	bkRun(t, e.gw)
	ctx := testkit.Context(t)
	viewer, _ := e.token("carol", "viewer")
	same := map[string]string{"Origin": e.base}

	resp, _ := adminDo(t, e, "POST", "/admin/login", url.Values{"token": {viewer}}, same)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/admin/credentials" {
		t.Fatalf("a viewer's login: %d to %q, want My credentials", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookie := adminLogin(t, e, viewer)
	hdr := map[string]string{"Cookie": cookie, "Origin": e.base}
	resp, page := adminDo(t, e, "GET", "/admin/credentials", nil, hdr)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "Not stored") || !strings.Contains(page, "the header X-Api-Key") ||
		strings.Contains(page, `href="/admin/tokens"`) || strings.Contains(page, "exchanged") {
		t.Fatalf("My credentials before storing: %d\n%s", resp.StatusCode, page)
	}
	for _, path := range []string{"/admin/", "/admin/tokens", "/admin/audit"} {
		if resp, body := adminDo(t, e, "GET", path, nil, hdr); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "My credentials") {
			t.Errorf("a viewer's GET %s: %d", path, resp.StatusCode)
		}
	}
	csrf := adminCSRF.FindStringSubmatch(page)[1]
	if resp, _ := adminDo(t, e, "POST", "/admin/credentials", url.Values{"csrf": {"wrong"}, "backend": {"tickets"}, "value": {"sk-carol"}}, hdr); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a store without the session's CSRF token: %d", resp.StatusCode)
	}
	if resp, _ := adminDo(t, e, "POST", "/admin/credentials", url.Values{"csrf": {csrf}, "backend": {"tickets"}, "value": {"sk-carol\r\nX-Admin: 1"}}, hdr); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a value with a line break: %d", resp.StatusCode)
	}
	resp, _ = adminDo(t, e, "POST", "/admin/credentials", url.Values{"csrf": {csrf}, "backend": {"tickets"}, "value": {"sk-carol-1"}}, hdr)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("store: %d", resp.StatusCode)
	}
	_, page = adminDo(t, e, "GET", "/admin/credentials", nil, hdr)
	if !strings.Contains(page, "Stored") || strings.Contains(page, "sk-carol") {
		t.Errorf("My credentials after storing (stored, and never shown):\n%s", page)
	}
	c := e.dial(gwStreamable, gwBearer(viewer))
	testkit.WaitFor(t, "whoami listed", func() bool {
		res, err := c.Call(ctx, "tools/list", nil)
		return err == nil && strings.Contains(string(res), `"tickets__whoami"`)
	})
	if res, err := gwCallTool(ctx, c, "tickets__whoami", nil); err != nil || pvText(t, res) != "key=sk-carol-1" {
		t.Errorf("carol's call after storing her key: %s %v", res, err)
	}
	if resp, _ := adminDo(t, e, "POST", "/admin/credentials/delete", url.Values{"csrf": {csrf}, "backend": {"tickets"}}, hdr); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	if _, err := gwCallTool(ctx, c, "tickets__whoami", nil); err == nil {
		t.Error("a call after deleting her key succeeded")
	}
	if err := e.closeGateway(ctx); err != nil {
		t.Fatal(err)
	}
	records, err := e.store.TailAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, r := range records {
		if r.Kind == "credential" {
			changes = append(changes, r.Subject+" "+r.Name+" "+r.Backend+" "+r.Outcome)
		}
	}
	if got := strings.Join(changes, ", "); got != "carol store tickets error, carol store tickets ok, carol delete tickets ok" {
		t.Errorf("audited credential changes: %s", got)
	}
}

// pxSecretEnv holds the gateway's client secret at the identity provider.
const pxSecretEnv = "MCPGATE_TEST_EXCHANGE_SECRET"

// pxBearer is what the backend saw: the exchanged token's claims.
func pxBearer(t *testing.T, text string) jwt.MapClaims {
	t.Helper()
	tok, ok := strings.CutPrefix(text, "key=Bearer ")
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(tok, claims); !ok || err != nil {
		t.Fatalf("the backend saw %q, not a bearer JWT (%v)", text, err)
	}
	return claims
}

// Two people signed in with their identity provider's tokens call a
// per_user backend whose credential is exchanged (RFC 8693), in both eras
// at once: the backend sees, on every call, a token of the caller (its
// subject), for itself (its audience), saying the gateway acts (act), and
// never the token they gave the gateway. Each person's token is exchanged
// once while it lasts, and again once it nears its end. A caller with a
// service token is told why the backend cannot act as them. The audit names
// the exchanged token's subject; no token reaches the log.
func TestEachPersonReachesAnExchangeBackendWithAnExchangedToken(t *testing.T) {
	is := oauthtest.New(t, "")
	t.Setenv(pxSecretEnv, oauthtest.ClientCredentialsSecret)
	url := pvBackendOf(t, "Authorization")
	e := gwStart(t, "listen: 127.0.0.1:0\nauth: {jwt: {algorithm: RS256, jwks_url: "+strconv.Quote(is.Server.URL+"/jwks")+", issuer: "+strconv.Quote(is.ID)+"}}\n"+
		"backends:\n  - {name: tickets, kind: http, url: "+strconv.Quote(url)+", identity: per_user,\n"+
		"     credential: {exchange: {token_url: "+strconv.Quote(is.ID+"/token")+", client_id: gw, client_secret_from: "+pxSecretEnv+", audience: tickets-api}}}\n")
	bkRun(t, e.gw)
	ctx := testkit.Context(t)
	tokens := map[string]string{}
	clients := map[string]*mcp.Client{}
	for _, who := range []string{"alice", "bob"} {
		tokens[who] = is.Token(t, map[string]any{"sub": who, "role": "viewer"})
		for _, era := range []mcp.Era{mcp.EraSession, mcp.EraSessionless} {
			clients[who+" "+string(era)] = pvConnect(t, e.base, "Bearer "+tokens[who], era)
		}
	}
	testkit.WaitFor(t, "whoami listed", func() bool {
		res, err := clients["alice session"].Call(ctx, "tools/list", nil)
		return err == nil && strings.Contains(string(res), `"tickets__whoami"`)
	})
	var wg sync.WaitGroup
	for name, c := range clients {
		who := strings.Fields(name)[0]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				res, err := gwCallTool(ctx, c, "tickets__whoami", nil)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				claims := pxBearer(t, pvText(t, res))
				act, _ := claims["act"].(map[string]any)
				if claims["sub"] != who || claims["aud"] != "tickets-api" || act["sub"] != "gw" || strings.Contains(pvText(t, res), tokens[who]) {
					t.Errorf("%s reached the backend with %v", name, claims)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := is.Exchanges(); len(got) != 2 || got[0].Resource != url || got[0].Audience != "tickets-api" ||
		got[0].SubjectTokenType != "urn:ietf:params:oauth:token-type:access_token" {
		t.Errorf("exchanges after 160 calls by two people: %+v, want one each", got)
	}

	svc, _ := e.token("ci", "viewer")
	_, err := gwCallTool(ctx, e.dial(gwStreamable, gwBearer(svc)), "tickets__whoami", nil)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeForbidden || !strings.Contains(je.Message, "not a service token") ||
		!strings.Contains(string(je.Data), `"kind":"credential_required"`) {
		t.Errorf("a service token's call: %v, want -32001 saying why", err)
	}

	// A token near its end is exchanged again (the margin is a tenth of
	// a short life).
	is.SetExchangeLifetime(2 * time.Second)

	carol := is.Token(t, map[string]any{"sub": "carol", "role": "viewer"})
	cc := pvConnect(t, e.base, "Bearer "+carol, mcp.EraSessionless)
	before := len(is.Exchanges())
	testkit.WaitFor(t, "carol's token exchanged again as it nears its end", func() bool {
		res, err := gwCallTool(ctx, cc, "tickets__whoami", nil)
		return err == nil && pxBearer(t, pvText(t, res))["sub"] == "carol" && len(is.Exchanges()) >= before+2
	})

	logs := e.logs.String()
	for who, tok := range tokens {
		if strings.Contains(logs, tok) {
			t.Errorf("%s's token reached the log", who)
		}
	}
	if strings.Contains(logs, oauthtest.ClientCredentialsSecret) {
		t.Error("the client secret reached the log")
	}
	if as := pvAudited(t, e); as["alice ok exchange:alice"] != 40 || as["bob ok exchange:bob"] != 40 {
		t.Errorf("audited calls by caller, outcome and upstream identity: %v", as)
	}
}

// pvAudited ends e's gateway (its audit log flushed) and counts its
// records of tickets__whoami by caller, outcome and upstream identity.
func pvAudited(t *testing.T, e *gwEnv) map[string]int {
	t.Helper()
	return gwAudited(t, e, func(r store.AuditRecord) string {
		if r.Name != "tickets__whoami" {
			return ""
		}
		return r.Subject + " " + r.Outcome + " " + r.Upstream
	})
}

// gwAudited closes the gateway and counts its audit records by key ("":
// not counted).
func gwAudited(t *testing.T, e *gwEnv, key func(store.AuditRecord) string) map[string]int {
	t.Helper()
	ctx := testkit.Context(t)
	if err := e.closeGateway(ctx); err != nil {
		t.Fatal(err)
	}
	records, err := e.store.TailAudit(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for _, r := range records {
		if k := key(r); k != "" {
			by[k]++
		}
	}
	return by
}

// A key stored on one replica is used on the other from its next call,
// and deleted on the other, is gone on the first from its next call:
// every call reads the shared store.
func TestAStoredKeyCountsOnEveryReplicaFromTheNextCall(t *testing.T) {
	t.Setenv(pvKeyEnv, strings.Repeat("5a", 32))
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	db := filepath.Join(t.TempDir(), "mcpgate.db")
	cfg := func() *config.Config {
		c, err := config.Parse([]byte("listen: 127.0.0.1:0\naudit: {disabled: true}\nvault: {key_from: " + pvKeyEnv + "}\nbackends:\n" +
			"  - {name: tickets, kind: http, url: " + strconv.Quote(pvBackend(t)) + ", identity: per_user, credential: {vault: {header: X-Api-Key}}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		c.Store = db
		return c
	}
	var secret, id string
	replica := func() *gateway.Gateway {
		st, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		gw, err := gateway.New(context.Background(), cfg(), gateway.Options{Store: st, Backend: bkFast})
		if err != nil {
			t.Fatal(err)
		}
		if secret == "" {
			s, rec, err := gw.Tokens().Create(ctx, "alice", "viewer", time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			secret, id = s, rec.ID
		}
		return gw
	}
	a := replica()
	baseA := bkServe(t, a)
	b := replica() // made after alice's token: it loads it
	baseB := bkServe(t, b)
	call := map[string]func() (string, error){}
	for name, base := range map[string]string{"A": baseA, "B": baseB} {
		conn, err := mcphttp.DialStreamable(ctx, base+"/mcp", mcphttp.ClientOptions{Header: http.Header{"Authorization": {gwBearer(secret)}}})
		if err != nil {
			t.Fatal(err)
		}
		c := mcp.NewClient(conn, mcp.ClientOptions{})
		t.Cleanup(func() { c.Close() })
		if _, err := c.Connect(ctx, mcp.EraSessionless); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "whoami listed on "+name, func() bool {
			res, err := c.Call(ctx, "tools/list", nil)
			return err == nil && strings.Contains(string(res), `"tickets__whoami"`)
		})
		call[name] = func() (string, error) {
			res, err := gwCallTool(ctx, c, "tickets__whoami", nil)
			if err != nil {
				return "", err
			}
			return pvText(t, res), nil
		}
	}
	if err := a.Credentials().Set(ctx, id, "tickets", "sk-alice-1"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"A", "B"} {
		if got, err := call[name](); err != nil || got != "key=sk-alice-1" {
			t.Errorf("replica %s after storing on A: %q %v", name, got, err)
		}
	}
	if err := b.Credentials().Delete(ctx, id, "tickets"); err != nil {
		t.Fatal(err)
	}
	var je *jsonrpc.Error
	for _, name := range []string{"A", "B"} {
		if got, err := call[name](); !errors.As(err, &je) || je.Code != mcp.CodeURLElicitationRequired {
			t.Errorf("replica %s after deleting on B: %q %v, want -32042", name, got, err)
		}
	}
}

// MCP's enterprise-managed authorization: the person's ID token is
// exchanged at their identity provider for an ID-JAG whose audience is
// the backend's authorization server (found from the backend's resource
// metadata), which grants, for that assertion, an access token of the
// person for the backend.
func TestEachPersonReachesAnIDJAGBackendWithTheirOwnToken(t *testing.T) {
	idp, as := oauthtest.New(t, ""), oauthtest.New(t, "/as")
	t.Setenv(pxSecretEnv, oauthtest.ClientCredentialsSecret)
	echo := pvBackendOf(t, "Authorization")
	mux := http.NewServeMux()
	var resource string
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": resource, "authorization_servers": []string{as.ID}})
	})
	proxy := httptest.NewServer(mux)
	t.Cleanup(proxy.Close)
	resource = proxy.URL
	mux.Handle("/", httputilProxy(t, echo))
	e := gwStart(t, "listen: 127.0.0.1:0\noutbound: {allow_hosts: [127.0.0.1]}\n"+
		"auth: {jwt: {algorithm: RS256, jwks_url: "+strconv.Quote(idp.Server.URL+"/jwks")+", issuer: "+strconv.Quote(idp.ID)+"}}\n"+
		"backends:\n  - {name: tickets, kind: http, url: "+strconv.Quote(resource)+", identity: per_user,\n"+
		"     credential: {exchange: {token_url: "+strconv.Quote(idp.ID+"/token")+", client_id: gw, client_secret_from: "+pxSecretEnv+
		", subject_token_type: id_token, requested_token_type: id-jag, authorization: {client_id: gw, client_secret_from: "+pxSecretEnv+"}}}}\n")
	bkRun(t, e.gw)
	idToken := idp.Token(t, map[string]any{"sub": "alice", "role": "viewer"})
	claims := pxBearer(t, pvWhoami(t, pvConnect(t, e.base, "Bearer "+idToken, mcp.EraSessionless)))
	if claims["iss"] != as.ID || claims["sub"] != "alice" || claims["aud"] != resource {
		t.Errorf("the backend saw a token %v, want the authorization server's, of alice, for it", claims)
	}
	if x := idp.Exchanges(); len(x) != 1 || x[0].Audience != as.ID || x[0].Resource != resource || x[0].SubjectTokenType != oauthclient.TokenTypeIDToken {
		t.Errorf("the identity provider's exchanges: %+v, want one ID-JAG for the authorization server", x)
	}
	if g := as.Granted(); g.GrantType != oauthtest.JWTBearerGrant || g.Resource != resource {
		t.Errorf("the authorization server granted %+v, want the JWT-bearer grant for the backend", g)
	}
}

// httputilProxy forwards every request to target.
func httputilProxy(t *testing.T, target string) http.Handler {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	return httputil.NewSingleHostReverseProxy(u)
}

// pvConnect connects a client of era to the gateway at base, sending
// authorization (a whole Authorization value) with every request.
func pvConnect(t *testing.T, base, authorization string, era mcp.Era) *mcp.Client {
	t.Helper()
	ctx := testkit.Context(t)
	conn, err := mcphttp.DialStreamable(ctx, base+"/mcp", mcphttp.ClientOptions{Header: http.Header{"Authorization": {authorization}}})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{})
	t.Cleanup(func() { c.Close() })
	if _, err := c.Connect(ctx, era); err != nil {
		t.Fatal(err)
	}
	return c
}

// pvWhoami calls tickets__whoami through c once it is listed, and returns
// its text.
func pvWhoami(t *testing.T, c *mcp.Client) string {
	t.Helper()
	ctx := testkit.Context(t)
	testkit.WaitFor(t, "whoami listed", func() bool {
		res, err := c.Call(ctx, "tools/list", nil)
		return err == nil && strings.Contains(string(res), `"tickets__whoami"`)
	})
	res, err := gwCallTool(ctx, c, "tickets__whoami", nil)
	if err != nil {
		t.Fatal(err)
	}
	return pvText(t, res)
}

// A backend that lets no one in without a person's token (every request
// answered 401 without one) is listed once the first person lists: the
// gateway exchanges their token and lists with it. Everyone then sees its
// tools, and each calls with their own token.
func TestAnExchangeBackendThatLetsNoOneInIsListedWithTheFirstPersonsToken(t *testing.T) {
	is := oauthtest.New(t, "")
	t.Setenv(pxSecretEnv, oauthtest.ClientCredentialsSecret)
	echo := httputilProxy(t, pvBackendOf(t, "Authorization"))
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tickets"`)
			http.Error(w, "a person's token, please", http.StatusUnauthorized)
			return
		}
		echo.ServeHTTP(w, r)
	}))
	t.Cleanup(guarded.Close)
	e := gwStart(t, "listen: 127.0.0.1:0\nauth: {jwt: {algorithm: RS256, jwks_url: "+strconv.Quote(is.Server.URL+"/jwks")+", issuer: "+strconv.Quote(is.ID)+"}}\n"+
		"backends:\n  - {name: tickets, kind: http, url: "+strconv.Quote(guarded.URL)+", identity: per_user,\n"+
		"     credential: {exchange: {token_url: "+strconv.Quote(is.ID+"/token")+", client_id: gw, client_secret_from: "+pxSecretEnv+"}}}\n")
	bkRun(t, e.gw)
	testkit.WaitFor(t, "the backend's first attempt, refused", func() bool {
		_, _, r := bkReadyz(t, e.base)
		return len(r.Backends) == 1 && !r.Backends[0].Up && r.Backends[0].LastError != ""
	})
	alice := pvConnect(t, e.base, "Bearer "+is.Token(t, map[string]any{"sub": "alice", "role": "viewer"}), mcp.EraSessionless)
	if got := pxBearer(t, pvWhoami(t, alice))["sub"]; got != "alice" {
		t.Errorf("alice's call reached the backend as %v", got)
	}
	bob := pvConnect(t, e.base, "Bearer "+is.Token(t, map[string]any{"sub": "bob", "role": "viewer"}), mcp.EraSession)
	if got := pxBearer(t, pvWhoami(t, bob))["sub"]; got != "bob" {
		t.Errorf("bob's call reached the backend as %v", got)
	}
}
