// middleware_test.go drives the Authenticator over real sockets: what is
// refused gets 401 with the right challenge and never reaches the handler,
// what passes reaches it with its identity and without its credential, and
// no credential is ever written to a log or a response.

package auth_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/mcp"
)

var knownRoles = map[string]bool{"viewer": true, "editor": true, "admin": true}

func knownRole(role string) bool { return knownRoles[role] }

// seen is what the protected handler reports about the request it got.
type seen struct {
	Identity      mcp.Identity
	HasIdentity   bool
	Authorization string
}

// gateway is an authenticated server over a real socket, with the
// credentials the tests present.
type gateway struct {
	srv     *httptest.Server
	tokens  *auth.Tokens
	log     *syncBuffer
	reached atomic.Int64

	good, revoked, expired, strangeRole string
	goodRec, revokedRec, expiredRec     store.Token
}

func newGateway(t *testing.T, o auth.Options) *gateway {
	t.Helper()
	g := &gateway{log: &syncBuffer{}}
	src := &fakeSource{}
	past := time.Now().Add(-48 * time.Hour)
	var rec store.Token
	g.expired, g.expiredRec, _ = auth.NewToken("old", "editor", past.Add(time.Hour), past)
	src.add(g.expiredRec)
	g.strangeRole, rec, _ = auth.NewToken("odd", "superuser", time.Time{}, past)
	src.add(rec)
	g.tokens = auth.NewTokens(src, nil)
	if err := g.tokens.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.good, g.goodRec = create(t, g.tokens, "ci-bot", time.Time{})
	g.revoked, g.revokedRec = create(t, g.tokens, "leaked", time.Time{})
	if err := g.tokens.Revoke(context.Background(), g.revokedRec.ID); err != nil {
		t.Fatal(err)
	}

	if o.Tokens == nil {
		o.Tokens = g.tokens
	}
	if o.KnownRole == nil {
		o.KnownRole = knownRole
	}
	o.Logger = slog.New(slog.NewJSONHandler(g.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := auth.New(o)
	if err != nil {
		t.Fatal(err)
	}
	g.srv = httptest.NewServer(a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.reached.Add(1)
		id, ok := mcp.IdentityFrom(r.Context())
		json.NewEncoder(w).Encode(seen{Identity: id, HasIdentity: ok, Authorization: r.Header.Get("Authorization")})
	})))
	t.Cleanup(g.srv.Close)
	return g
}

// do sends a POST with the given Authorization header values.
func (g *gateway) do(t *testing.T, authorization ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range authorization {
		req.Header.Add("Authorization", v)
	}
	resp, err := g.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func jwtVerifier(t *testing.T) *auth.JWTVerifier { return verifier(t, hs256()) }

// liveJWT is a JWT good at the real clock, as the middleware uses it.
func liveJWT(t testing.TB, kv ...any) string {
	c := jwt.MapClaims{"sub": "alice", "role": "viewer", "exp": time.Now().Add(time.Hour).Unix()}
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1]
	}
	return sign(t, jwt.SigningMethodHS256, hmacSecret, c, "")
}

const plainChallenge = `Bearer realm="mcpgate"`

func TestWrap(t *testing.T) {
	g := newGateway(t, auth.Options{JWT: jwtVerifier(t)})
	goodJWT := liveJWT(t, "jti", "j-1")
	for _, c := range []struct {
		rule          string
		authorization []string
		wantIdentity  *mcp.Identity // nil: refused with 401
		wantReason    string        // error_description when a credential was presented
	}{
		{"no Authorization header is refused with a plain challenge", nil, nil, ""},
		{"another scheme is refused with a plain challenge", []string{"Basic dXNlcjpwYXNz"}, nil, ""},
		{"Bearer without a credential is refused", []string{"Bearer"}, nil, ""},
		{"Bearer with blanks for a credential is refused", []string{"Bearer    "}, nil, ""},
		{"a credential with a space in it is refused", []string{"Bearer " + g.good + " extra"}, nil, ""},
		{"two Authorization headers are refused", []string{"Bearer " + g.good, "Bearer " + g.good}, nil, ""},
		{"an unknown service token is invalid_token", []string{"Bearer mcpg_" + strings.Repeat("A", 43)}, nil, "unknown token"},
		{"a revoked service token is invalid_token", []string{"Bearer " + g.revoked}, nil, "token revoked"},
		{"an expired service token is invalid_token", []string{"Bearer " + g.expired}, nil, "token expired"},
		{"a service token whose role is unknown is invalid_token", []string{"Bearer " + g.strangeRole}, nil, "the token's role is not known here"},
		{"a string that is no JWT is invalid_token", []string{"Bearer not-a-token"}, nil, "malformed token"},
		{"a JWT with a bad signature is invalid_token", []string{"Bearer " + goodJWT + "x"}, nil, "signature or algorithm not accepted"},
		{"an expired JWT is invalid_token", []string{"Bearer " + liveJWT(t, "exp", time.Now().Add(-time.Hour).Unix())}, nil, "token expired"},
		{"a JWT whose role is unknown is invalid_token", []string{"Bearer " + liveJWT(t, "role", "superuser")}, nil, "the token's role is not known here"},
		{"a JWT without a role is invalid_token", []string{"Bearer " + liveJWT(t, "role", "")}, nil, "the token carries no role"},
		{"a good service token reaches the handler with its identity", []string{"Bearer " + g.good}, &mcp.Identity{Subject: "ci-bot", Role: "editor", TokenID: g.goodRec.ID, Principal: g.goodRec.ID}, ""},
		{"the scheme is case-insensitive", []string{"bEaReR " + g.good}, &mcp.Identity{Subject: "ci-bot", Role: "editor", TokenID: g.goodRec.ID, Principal: g.goodRec.ID}, ""},
		{"a good JWT reaches the handler with its identity", []string{"Bearer " + goodJWT}, &mcp.Identity{Subject: "alice", Role: "viewer", TokenID: "j-1", Principal: auth.SubjectPrincipal("", "alice")}, ""},
	} {
		t.Run(c.rule, func(t *testing.T) {
			before := g.reached.Load()
			resp, body := g.do(t, c.authorization...)
			if c.wantIdentity != nil {
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d %s", resp.StatusCode, body)
				}
				var s seen
				if err := json.Unmarshal(body, &s); err != nil {
					t.Fatal(err)
				}
				if !s.HasIdentity || s.Identity != *c.wantIdentity {
					t.Fatalf("handler saw %+v, want %+v", s.Identity, *c.wantIdentity)
				}
				if s.Authorization != "" {
					t.Fatal("the credential reached the handler")
				}
				return
			}
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", resp.StatusCode)
			}
			if g.reached.Load() != before {
				t.Fatal("a refused request reached the handler")
			}
			challenge := resp.Header.Get("WWW-Authenticate")
			if c.wantReason == "" {
				if challenge != plainChallenge {
					t.Fatalf("WWW-Authenticate %q, want %q", challenge, plainChallenge)
				}
			} else if want := plainChallenge + `, error="invalid_token", error_description="` + c.wantReason + `"`; challenge != want {
				t.Fatalf("WWW-Authenticate %q, want %q", challenge, want)
			}
			var msg struct{ Error, Message string }
			if err := json.Unmarshal(body, &msg); err != nil || msg.Error != "unauthorized" || msg.Message == "" {
				t.Fatalf("body %s: want {error: unauthorized, message}", body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
		})
	}
}

// Revocation takes effect on the very next request.
func TestWrapRefusesARevokedTokenAtOnce(t *testing.T) {
	g := newGateway(t, auth.Options{})
	secret, rec := create(t, g.tokens, "soon-revoked", time.Time{})
	if resp, _ := g.do(t, "Bearer "+secret); resp.StatusCode != http.StatusOK {
		t.Fatalf("before revocation: %d", resp.StatusCode)
	}
	if err := g.tokens.Revoke(context.Background(), rec.ID); err != nil {
		t.Fatal(err)
	}
	if resp, _ := g.do(t, "Bearer "+secret); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after revocation: %d", resp.StatusCode)
	}
}

func TestWrapRefusesJWTsWhenNoVerifierIsConfigured(t *testing.T) {
	g := newGateway(t, auth.Options{})
	resp, _ := g.do(t, "Bearer "+liveJWT(t))
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("status %d, challenge %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// No credential — service token or JWT, good or bad — appears in a log
// line or a response, while the logs still say which token was refused
// and why.
func TestCredentialsNeverLoggedNorEchoed(t *testing.T) {
	g := newGateway(t, auth.Options{JWT: jwtVerifier(t)})
	goodJWT := liveJWT(t)
	badSig := goodJWT[:len(goodJWT)-4] + "AAAA"
	unknownRoleJWT := liveJWT(t, "role", "superuser")
	unknownToken := "mcpg_" + strings.Repeat("Z", 43)
	credentials := []string{g.good, g.revoked, g.expired, g.strangeRole, unknownToken, goodJWT, badSig, unknownRoleJWT, "garbage-credential"}

	var bodies []string
	for _, cred := range credentials {
		resp, body := g.do(t, "Bearer "+cred)
		bodies = append(bodies, string(body), resp.Header.Get("WWW-Authenticate"))
	}
	logs := g.log.String()
	for _, cred := range credentials {
		needles := []string{cred}
		if strings.HasPrefix(cred, auth.TokenPrefix) {
			needles = append(needles, strings.TrimPrefix(cred, auth.TokenPrefix))
		}
		if parts := strings.Split(cred, "."); len(parts) == 3 {
			needles = append(needles, parts[2]) // the signature alone is secret enough
		}
		for _, n := range needles {
			if strings.Contains(logs, n) {
				t.Errorf("the log holds a credential:\n%s", logs)
			}
			for _, b := range bodies {
				if strings.Contains(b, n) {
					t.Errorf("a response holds a credential: %s", b)
				}
			}
		}
	}
	for _, want := range []string{
		`"reason":"token_revoked"`, `"token_id":"` + g.revokedRec.ID + `"`,
		`"reason":"token_expired"`, `"token_id":"` + g.expiredRec.ID + `"`,
		`"reason":"unknown_role"`, `"role":"superuser"`,
		`"reason":"bad_signature"`, `"msg":"authenticated"`, `"token_id":"` + g.goodRec.ID + `"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %s:\n%s", want, logs)
		}
	}
}

// Wrap hands the handler the ResponseWriter it got, so event streams
// (Streamable HTTP GET, legacy SSE) can still flush.
func TestWrapKeepsTheResponseWriterFlushable(t *testing.T) {
	tokens := auth.NewTokens(&fakeSource{}, nil)
	a, err := auth.New(auth.Options{Tokens: tokens, KnownRole: knownRole})
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := create(t, tokens, "stream", time.Time{})
	srv := httptest.NewServer(a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := w.(http.Flusher)
		json.NewEncoder(w).Encode(ok)
	})))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var flushable bool
	if err := json.NewDecoder(resp.Body).Decode(&flushable); err != nil || !flushable {
		t.Fatalf("flushable %v, %v", flushable, err)
	}
}

func TestNewRefusesAnIncompleteConfiguration(t *testing.T) {
	tokens := auth.NewTokens(&fakeSource{}, nil)
	for _, c := range []struct {
		rule string
		o    auth.Options
	}{
		{"neither tokens nor JWT", auth.Options{KnownRole: knownRole}},
		{"no role check", auth.Options{Tokens: tokens}},
		{"a realm with a quote", auth.Options{Tokens: tokens, KnownRole: knownRole, Realm: `a"b`}},
	} {
		t.Run(c.rule, func(t *testing.T) {
			if _, err := auth.New(c.o); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestRealmIsConfigurable(t *testing.T) {
	g := newGateway(t, auth.Options{Realm: "acme"})
	if resp, _ := g.do(t); resp.Header.Get("WWW-Authenticate") != `Bearer realm="acme"` {
		t.Fatalf("challenge %q", resp.Header.Get("WWW-Authenticate"))
	}
}
