// auth_test.go pins authentication through the real gateway (spec §3,
// §7): every HTTP route refuses a request without a good credential with
// 401 before anything reaches MCP, a revocation takes effect at once, a
// session belongs to the identity that opened it, and stdio and the no-auth
// mode take their identity from configuration.

package gateway_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/stdio"
)

// gwUnknownToken is a well-formed service token that was never issued.
func gwUnknownToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return auth.TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// gwBadCredentials are Authorization values that must all be refused.
func gwBadCredentials() []struct{ name, auth string } {
	return []struct{ name, auth string }{
		{"no credential", ""},
		{"unknown service token", gwBearer(gwUnknownToken())},
		{"not a token", gwBearer("hello")},
		{"not a JWT", gwBearer("eyJhbGciOiJIUzI1NiJ9.e30.c2ln")},
		{"basic scheme", "Basic YWxpY2U6c2VjcmV0"},
		{"bearer without credential", "Bearer"},
		{"two words", "Bearer abc def"},
	}
}

// gwWantUnauthorized fails unless rep is a 401 with a Bearer challenge
// that does not echo the credential presented.
func gwWantUnauthorized(t *testing.T, what string, rep gwReply, authValue string) {
	t.Helper()
	if rep.status != http.StatusUnauthorized {
		t.Errorf("%s: status %d (%s), want 401", what, rep.status, rep.body)
		return
	}
	challenge := rep.header.Get("WWW-Authenticate")
	if !strings.HasPrefix(challenge, "Bearer") {
		t.Errorf("%s: WWW-Authenticate = %q, want a Bearer challenge", what, challenge)
	}
	if _, cred, _ := strings.Cut(authValue, " "); len(cred) > 3 {
		if bytes.Contains(rep.body, []byte(cred)) || strings.Contains(challenge, cred) {
			t.Errorf("%s: the refusal echoes the credential: %s / %s", what, challenge, rep.body)
		}
	}
}

// Every route — Streamable HTTP POST, GET and DELETE, the legacy SSE
// stream and its POSTs — refuses a missing, unknown or malformed
// credential with 401 and a Bearer challenge, even for a session that a
// good credential opened, and nothing of it reaches a handler.
func TestAuthEveryRouteRefusesABadCredential(t *testing.T) {
	e := gwStart(t, "")
	secret, _ := e.token("alice", "admin")
	session := e.initialize(secret)
	_, messages := e.sseSession(gwBearer(secret))

	routes := []gwRequest{
		{method: http.MethodPost, path: "/mcp", body: gwInitializeBody},
		{method: http.MethodPost, path: "/mcp", session: session, body: gwToolCallBody(2, gwToolAdmin)},
		{method: http.MethodGet, path: "/mcp", session: session},
		{method: http.MethodDelete, path: "/mcp", session: session},
		{method: http.MethodGet, path: "/sse"},
		{method: http.MethodPost, path: messages, body: gwToolCallBody(3, gwToolAdmin)},
	}
	for _, cred := range gwBadCredentials() {
		for _, r := range routes {
			r.auth = cred.auth
			what := cred.name + ": " + r.method + " " + r.path
			if r.session != "" {
				what += " (open session)"
			}
			gwWantUnauthorized(t, what, e.do(r), cred.auth)
		}
	}
	if n := e.probe.count(gwToolAdmin); n != 0 {
		t.Errorf("refused requests reached the handler %d times", n)
	}

	// The refusals did not end the sessions: their owner goes on.
	rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(secret), session: session, body: gwToolCallBody(4, gwToolAdmin)})
	if rep.status != http.StatusOK || !bytes.Contains(rep.body, []byte(gwToolAdmin+" done")) {
		t.Errorf("owner's call after the refusals: %d %s", rep.status, rep.body)
	}
	rep = e.do(gwRequest{method: http.MethodPost, path: messages, auth: gwBearer(secret), body: gwToolCallBody(5, gwToolAdmin)})
	if rep.status/100 != 2 {
		t.Errorf("owner's SSE post after the refusals: %d %s", rep.status, rep.body)
	}
}

// Stateless Streamable HTTP has one route and it is behind authentication
// like the rest; a good credential is served without a session.
func TestAuthStatelessRefusesABadCredential(t *testing.T) {
	e := gwStart(t, "http:\n  stateless: true\n")
	secret, _ := e.token("alice", "viewer")
	for _, cred := range gwBadCredentials() {
		r := gwRequest{method: http.MethodPost, path: "/mcp", auth: cred.auth, body: gwToolCallBody(1, gwToolEcho)}
		gwWantUnauthorized(t, cred.name+": stateless POST /mcp", e.do(r), cred.auth)
	}
	if n := e.probe.count(gwToolEcho); n != 0 {
		t.Errorf("refused requests reached the handler %d times", n)
	}

	rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(secret), body: gwToolCallBody(2, gwToolExpensive)})
	if rep.status != http.StatusOK || !bytes.Contains(rep.body, []byte(gwToolExpensive+" done")) {
		t.Errorf("stateless call with a good token: %d %s", rep.status, rep.body)
	}
	c := e.dial(gwStreamable, gwBearer(secret))
	if _, err := gwCallTool(testkit.Context(t), c, gwToolExpensive, nil); err != nil {
		t.Errorf("stateless client call: %v", err)
	}
}

// /healthz answers a prober that holds no credential, and says nothing
// beyond "ok".
func TestHealthzNeedsNoCredentialAndRevealsNothing(t *testing.T) {
	e := gwStart(t, "")
	e.token("alice", "admin")
	for _, authValue := range []string{"", gwBearer(gwUnknownToken())} {
		rep := e.do(gwRequest{method: http.MethodGet, path: "/healthz", auth: authValue})
		if rep.status != http.StatusOK || string(rep.body) != "ok\n" {
			t.Errorf("GET /healthz (auth %q): %d %q, want 200 \"ok\\n\"", authValue, rep.status, rep.body)
		}
		for _, h := range []string{"WWW-Authenticate", "Set-Cookie", "Server", "X-Powered-By", "Mcp-Session-Id"} {
			if v := rep.header.Get(h); v != "" {
				t.Errorf("GET /healthz carries %s: %q", h, v)
			}
		}
	}
}

// A token revoked through the gateway is refused on the very next
// request, on every route of a session it opened.
func TestAuthRevokedTokenRefusedOnTheNextRequest(t *testing.T) {
	e := gwStart(t, "")
	ctx := testkit.Context(t)
	secret, id := e.token("alice", "editor")
	session := e.initialize(secret)
	client := e.dial(gwStreamable, gwBearer(secret))
	_, messages := e.sseSession(gwBearer(secret))
	if _, err := gwCallTool(ctx, client, gwToolEdit, nil); err != nil {
		t.Fatalf("call before revocation: %v", err)
	}

	if err := e.gw.Tokens().Revoke(ctx, id); err != nil {
		t.Fatal(err)
	}
	for _, r := range []gwRequest{
		{method: http.MethodPost, path: "/mcp", session: session, body: gwToolCallBody(2, gwToolEdit)},
		{method: http.MethodGet, path: "/mcp", session: session},
		{method: http.MethodDelete, path: "/mcp", session: session},
		{method: http.MethodPost, path: "/mcp", body: gwInitializeBody},
		{method: http.MethodGet, path: "/sse"},
		{method: http.MethodPost, path: messages, body: gwToolCallBody(3, gwToolEdit)},
	} {
		r.auth = gwBearer(secret)
		gwWantUnauthorized(t, "revoked: "+r.method+" "+r.path, e.do(r), r.auth)
	}
	// Our client learns it from the HTTP status.
	_, err := gwCallTool(ctx, client, gwToolEdit, nil)
	if je, _ := gwRPCError(err); je == nil || !bytes.Contains(je.Data, []byte(`"httpStatus":401`)) {
		t.Errorf("client call after revocation: %v, want a transport error carrying HTTP 401", err)
	}
	if n := e.probe.count(gwToolEdit); n != 1 {
		t.Errorf("%s ran %d times, want 1 (before the revocation only)", gwToolEdit, n)
	}
	if !bytes.Contains(e.logs.Bytes(), []byte(`"reason":"token_revoked"`)) {
		t.Error("no log line gives the reason token_revoked")
	}
}

// A token revoked through another store handle — the CLI, another
// gateway — is refused once the gateway has refreshed its index, and a
// token created there is accepted.
func TestAuthTokenRevokedElsewhereRefusedAfterRefresh(t *testing.T) {
	e := gwStart(t, "")
	ctx := testkit.Context(t)
	secret, id := e.token("alice", "editor")
	session := e.initialize(secret)
	call := gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(secret), session: session, body: gwToolCallBody(2, gwToolEdit)}
	if rep := e.do(call); rep.status != http.StatusOK {
		t.Fatalf("call before revocation: %d %s", rep.status, rep.body)
	}

	cli, err := sqlite.Open(ctx, e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if err := cli.RevokeToken(ctx, id, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	newSecret, _, err := auth.NewTokens(cli, nil).Create(ctx, "bob", "viewer", time.Time{})
	if err != nil {
		t.Fatal(err)
	}

	if err := e.gw.Tokens().Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	gwWantUnauthorized(t, "revoked elsewhere, same session", e.do(call), call.auth)
	gwWantUnauthorized(t, "revoked elsewhere, new session",
		e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(secret), body: gwInitializeBody}), gwBearer(secret))
	c := e.dial(gwStreamable, gwBearer(newSecret))
	if _, err := gwCallTool(ctx, c, gwToolEcho, map[string]any{"text": "hi"}); err != nil {
		t.Errorf("token created elsewhere, after refresh: %v", err)
	}
}

// An expired token is refused, and says so.
func TestAuthExpiredTokenRefused(t *testing.T) {
	e := gwStart(t, "")
	ctx := testkit.Context(t)
	past := time.Now().Add(-2 * time.Hour)
	secret, rec, err := auth.NewToken("old", "admin", past.Add(time.Hour), past)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateToken(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := e.gw.Tokens().Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(secret), body: gwInitializeBody})
	gwWantUnauthorized(t, "expired token", rep, gwBearer(secret))
	if !strings.Contains(rep.header.Get("WWW-Authenticate"), "expired") {
		t.Errorf("challenge %q does not say the token expired", rep.header.Get("WWW-Authenticate"))
	}
}

// A session belongs to the identity that opened it: any other credential
// presenting its id — another subject, or the same name on another token —
// is told it does not exist, exactly as for an unknown id, and cannot end
// it.
func TestSessionBoundToItsCreator(t *testing.T) {
	e := gwStart(t, "")
	owner, _ := e.token("alice", "viewer")
	others := map[string]string{}
	others["another subject"], _ = e.token("mallory", "admin")
	others["same name, another token"], _ = e.token("alice", "viewer")
	session := e.initialize(owner)
	_, messages := e.sseSession(gwBearer(owner))
	unknownMessages := "/messages?sessionId=NOSUCHSESSION"

	for who, other := range others {
		for _, r := range []gwRequest{
			{method: http.MethodPost, body: gwToolCallBody(2, gwToolExpensive)},
			{method: http.MethodGet},
			{method: http.MethodDelete},
		} {
			r.path, r.auth = "/mcp", gwBearer(other)
			r.session = "NOSUCHSESSION"
			unknown := e.do(r)
			r.session = session
			got := e.do(r)
			if got.status != http.StatusNotFound || got.status != unknown.status || !bytes.Equal(got.body, unknown.body) {
				t.Errorf("%s: %s /mcp with the owner's session: %d %s; unknown session: %d %s; want both 404 and alike",
					who, r.method, got.status, got.body, unknown.status, unknown.body)
			}
		}
		post := gwRequest{method: http.MethodPost, auth: gwBearer(other), body: gwToolCallBody(3, gwToolExpensive)}
		post.path = unknownMessages
		unknown := e.do(post)
		post.path = messages
		got := e.do(post)
		if got.status != http.StatusNotFound || got.status != unknown.status || !bytes.Equal(got.body, unknown.body) {
			t.Errorf("%s: POST %s: %d %s; unknown session: %d %s; want both 404 and alike",
				who, messages, got.status, got.body, unknown.status, unknown.body)
		}
	}

	// The session outlived the DELETEs of the others.
	rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(owner), session: session,
		body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"view_echo","arguments":{"text":"still mine"}}}`})
	if rep.status != http.StatusOK || !bytes.Contains(rep.body, []byte("echoed")) {
		t.Errorf("owner after the others' attempts: %d %s", rep.status, rep.body)
	}
	if n := e.probe.count(gwToolExpensive); n != 0 {
		t.Errorf("the others' calls reached the handler %d times", n)
	}
}

// stdio has no credential: the session is the configured identity, whose
// role filters the lists and gates the calls as on HTTP.
func TestStdioServesTheConfiguredIdentity(t *testing.T) {
	e := gwStart(t, "auth:\n  identity:\n    subject: desk\n    role: viewer\n")
	ctx := testkit.Context(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := e.gw.ServeStdio(ctx, inR, outW)
		_ = outW.Close()
		served <- err
	}()
	c := mcp.NewClient(stdio.NewConn(outR, inW), mcp.ClientOptions{Info: mcp.Implementation{Name: "stdio-test", Version: "0"}})
	t.Cleanup(func() {
		_ = c.Close() // closes the server's stdin: ServeStdio returns
		if err := <-served; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}

	lists := []struct {
		method, key, member string
		want                []string
	}{
		{"tools/list", "tools", "name", []string{gwToolEcho, gwToolExpensive2, gwToolExpensive, gwToolFail}},
		{"resources/list", "resources", "uri", []string{gwResPublic}},
		{"resources/templates/list", "resourceTemplates", "uriTemplate", nil},
		{"prompts/list", "prompts", "name", []string{gwPromptGreet}},
	}
	for _, l := range lists {
		res, err := gwCall(ctx, c, l.method, map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", l.method, err)
		}
		got := gwNames(t, res, l.key, l.member)
		slices.Sort(got)
		slices.Sort(l.want)
		if !slices.Equal(got, l.want) {
			t.Errorf("%s as viewer = %v, want %v", l.method, got, l.want)
		}
	}

	if _, err := gwCallTool(ctx, c, gwToolEcho, map[string]any{"text": "hi"}); err != nil {
		t.Errorf("viewer tool: %v", err)
	}
	for _, refused := range []struct {
		method string
		params map[string]any
	}{
		{"tools/call", map[string]any{"name": gwToolAdmin, "arguments": map[string]any{}}},
		{"tools/call", map[string]any{"name": gwToolEdit, "arguments": map[string]any{}}},
		{"resources/read", map[string]any{"uri": gwResVault}},
		{"resources/read", map[string]any{"uri": "mem://notes/7"}},
		{"prompts/get", map[string]any{"name": gwPromptAdmin}},
	} {
		_, err := gwCall(ctx, c, refused.method, refused.params)
		d := gwWantRefusal(t, refused.method+" over stdio", err, jsonrpc.CodeForbidden, "forbidden")
		if d.Role != "viewer" {
			t.Errorf("%s: data.role = %q, want the configured viewer", refused.method, d.Role)
		}
	}
	for _, name := range []string{gwToolAdmin, gwToolEdit, gwResVault, gwTemplNotes, gwPromptAdmin} {
		if n := e.probe.count(name); n != 0 {
			t.Errorf("refused %s ran %d times", name, n)
		}
	}
}

// No-auth mode is for local development: the gateway will not be built
// for an address other machines can reach.
func TestNoAuthRefusesANonLoopbackAddress(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	for _, listen := range []string{"0.0.0.0:8750", "[::]:8750", ":8750", "192.0.2.1:8750", "example.com:8750"} {
		t.Run(listen, func(t *testing.T) {
			cfg, err := config.Parse([]byte("listen: \"" + listen + "\"\nauth:\n  disabled: true\n"))
			if err != nil {
				t.Fatal(err)
			}
			st, err := sqlite.Open(ctx, t.TempDir()+"/mcpgate.db")
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			gw, err := gateway.New(ctx, cfg, gateway.Options{Store: st, Catalogue: gwCatalogue(&gwProbe{runs: map[string]int{}})})
			if err == nil {
				_ = gw.Close(ctx)
				t.Fatalf("gateway.New with auth.disabled on %s: no error", listen)
			}
			if !strings.Contains(err.Error(), "loopback") {
				t.Errorf("error %q does not mention loopback", err)
			}
			if !errors.Is(err, auth.ErrNotLoopback) {
				t.Errorf("error %v is not auth.ErrNotLoopback", err)
			}
		})
	}
}

// On a loopback address no-auth mode serves requests without a credential
// as the configured identity, with that identity's role.
func TestNoAuthServesTheConfiguredIdentity(t *testing.T) {
	e := gwStart(t, "listen: 127.0.0.1:0\nauth:\n  disabled: true\n  identity:\n    subject: dev\n    role: editor\n")
	ctx := testkit.Context(t)
	if e.gw.Tokens() != nil {
		t.Error("Tokens() is not nil with authentication off")
	}
	rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", body: gwInitializeBody})
	if rep.status != http.StatusOK {
		t.Fatalf("initialize without a credential: %d %s", rep.status, rep.body)
	}
	for _, transport := range []string{gwStreamable, gwSSE} {
		c := e.dial(transport, "")
		res, err := gwCall(ctx, c, "tools/list", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		names := gwNames(t, res, "tools", "name")
		if !slices.Contains(names, gwToolEdit) || slices.Contains(names, gwToolAdmin) {
			t.Errorf("%s: tools as the configured editor = %v", transport, names)
		}
		if _, err := gwCallTool(ctx, c, gwToolEdit, nil); err != nil {
			t.Errorf("%s: editor tool: %v", transport, err)
		}
		_, err = gwCallTool(ctx, c, gwToolAdmin, nil)
		if d := gwWantRefusal(t, transport+": admin tool", err, jsonrpc.CodeForbidden, "forbidden"); d.Role != "editor" {
			t.Errorf("%s: data.role = %q, want editor", transport, d.Role)
		}
	}
	if err := e.closeGateway(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range gwTail(t, e.store) {
		if r.Subject != "dev" || r.Role != "editor" {
			t.Errorf("audit record %+v, want subject dev with role editor", r)
		}
	}
}

// A service token is shown once and kept nowhere in clear: after tokens
// were created, used, refused and revoked, neither the database (file and
// WAL), nor the log at debug level, nor any HTTP answer holds a secret.
func TestTokenSecretsNeverStoredLoggedOrAnswered(t *testing.T) {
	e := gwStart(t, "")
	ctx := testkit.Context(t)
	var secrets []string
	issue := func(name, role string) (string, string) {
		s, id := e.token(name, role)
		secrets = append(secrets, s)
		return s, id
	}
	admin, adminID := issue("ops", "admin")
	viewer, _ := issue("reader", "viewer")
	editor, editorID := issue("writer", "editor")
	never := gwUnknownToken()
	secrets = append(secrets, never)

	for _, secret := range []string{admin, viewer, editor} {
		for _, transport := range []string{gwStreamable, gwSSE} {
			c := e.dial(transport, gwBearer(secret))
			_, _ = gwCall(ctx, c, "tools/list", map[string]any{})
			_, _ = gwCallTool(ctx, c, gwToolEcho, map[string]any{"text": "x"})
			_, _ = gwCallTool(ctx, c, gwToolAdmin, nil) // refused below admin
		}
	}
	if err := e.gw.Tokens().Revoke(ctx, editorID); err != nil {
		t.Fatal(err)
	}
	for _, authValue := range []string{
		gwBearer(editor),      // revoked
		gwBearer(never),       // unknown
		"Token " + admin,      // wrong scheme
		gwBearer(admin + "x"), // damaged
		gwBearer(admin) + " " + viewer,
	} {
		for _, path := range []string{"/mcp", "/sse"} {
			method := http.MethodPost
			if path == "/sse" {
				method = http.MethodGet
			}
			if rep := e.do(gwRequest{method: method, path: path, auth: authValue, body: gwInitializeBody}); rep.status != http.StatusUnauthorized {
				t.Errorf("%s %s: %d, want 401", method, path, rep.status)
			}
		}
	}
	if err := e.closeGateway(ctx); err != nil { // the audit log is written out
		t.Fatal(err)
	}

	places := map[string][]byte{
		"database (open)": gwFileBytes(t, e.dbPath),
		"log":             e.logs.Bytes(),
		"HTTP answers":    e.seen.Bytes(),
	}
	e.closeStore()
	places["database (closed)"] = gwFileBytes(t, e.dbPath)
	for place, b := range places {
		for _, secret := range secrets {
			body := strings.TrimPrefix(secret, auth.TokenPrefix)
			if bytes.Contains(b, []byte(body)) {
				t.Errorf("%s holds a token secret", place)
			}
		}
	}
	// The search looked at something: the log names tokens by their ids,
	// and the answers were read.
	for _, id := range []string{adminID, editorID} {
		if !bytes.Contains(places["log"], []byte(id)) {
			t.Errorf("the log never names token %s; was it captured?", id)
		}
	}
	if !bytes.Contains(places["HTTP answers"], []byte("echoed")) || !bytes.Contains(places["HTTP answers"], []byte("unauthorized")) {
		t.Error("the recorded HTTP answers miss the calls made")
	}
}

// gwJWTSecretEnv names the variable the JWT tests put the HS256 secret in.
const gwJWTSecretEnv = "MCPGATE_TEST_JWT_SECRET"

// gwMint signs claims with method and key.
func gwMint(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// JWTs through the gateway: a good HS256 token's role is the caller's
// role; a token signed with another key or algorithm, without exp, or
// naming an unknown role is refused with 401 before MCP.
func TestJWTThroughTheGateway(t *testing.T) {
	secret := []byte("a-shared-secret-of-at-least-32-bytes!!")
	t.Setenv(gwJWTSecretEnv, string(secret))
	e := gwStart(t, "auth:\n  jwt:\n    algorithm: HS256\n    secret_env: "+gwJWTSecretEnv+"\n")
	ctx := testkit.Context(t)
	exp := time.Now().Add(time.Hour).Unix()

	good := gwMint(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "role": "editor", "exp": exp})
	c := e.dial(gwStreamable, gwBearer(good))
	if _, err := gwCallTool(ctx, c, gwToolEdit, nil); err != nil {
		t.Errorf("editor JWT, editor tool: %v", err)
	}
	_, err := gwCallTool(ctx, c, gwToolAdmin, nil)
	d := gwWantRefusal(t, "editor JWT, admin tool", err, jsonrpc.CodeForbidden, "forbidden")
	if d.Required != "admin" || d.Role != "editor" {
		t.Errorf("refusal data = %+v, want required admin, role editor", d)
	}
	if je, _ := gwRPCError(err); je != nil && !strings.Contains(je.Message, "admin") {
		t.Errorf("refusal message %q does not name the role required", je.Message)
	}
	if n := e.probe.count(gwToolAdmin); n != 0 {
		t.Errorf("refused admin tool ran %d times", n)
	}

	for _, bad := range []struct{ name, token string }{
		{"another secret", gwMint(t, jwt.SigningMethodHS256, []byte("another-secret-also-32-bytes-long!!!"),
			jwt.MapClaims{"sub": "alice", "role": "editor", "exp": exp})},
		{"no exp", gwMint(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "role": "editor"})},
		{"expired", gwMint(t, jwt.SigningMethodHS256, secret,
			jwt.MapClaims{"sub": "alice", "role": "editor", "exp": time.Now().Add(-time.Hour).Unix()})},
		{"HS384", gwMint(t, jwt.SigningMethodHS384, secret, jwt.MapClaims{"sub": "alice", "role": "editor", "exp": exp})},
		{"alg none", gwMint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType,
			jwt.MapClaims{"sub": "alice", "role": "admin", "exp": exp})},
		{"unknown role", gwMint(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "role": "boss", "exp": exp})},
		{"no role", gwMint(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": exp})},
	} {
		rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(bad.token), body: gwInitializeBody})
		gwWantUnauthorized(t, "JWT "+bad.name, rep, gwBearer(bad.token))
		if ch := rep.header.Get("WWW-Authenticate"); !strings.Contains(ch, `error="invalid_token"`) {
			t.Errorf("JWT %s: challenge %q does not say invalid_token", bad.name, ch)
		}
		if _, err := e.dialErr(gwStreamable, gwBearer(bad.token)); err == nil {
			t.Errorf("JWT %s: our client initialized", bad.name)
		}
	}
}
