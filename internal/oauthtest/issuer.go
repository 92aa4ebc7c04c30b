// Package oauthtest plays an external OAuth authorization server for the
// tests of the gateway as a protected resource. It publishes its metadata
// (RFC 8414, at the well-known path inserted before the issuer's path) and
// its keys (a JWKS). It mints RS256 access tokens (RFC 9068) with the
// claims a test asks for. For a real OAuth client (the TypeScript SDK's) it
// also runs the authorization code flow with PKCE (S256), with dynamic
// client registration (RFC 7591) and the resource indicator (RFC 8707):
// exact redirect URIs, one-use codes, the verifier checked. It signs with a
// real key over a real socket; only the person signing in is made up (the
// authorization endpoint approves at once, as Subject or the login_hint).
package oauthtest

import (
	"cmp"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// key is generated once per test binary: RSA generation is slow under -race.
var key = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// Issuer is one authorization server on a loopback test server.
type Issuer struct {
	Server *httptest.Server
	// ID is its issuer identifier: the server's URL and path.
	ID string
	// Metadata is what it publishes; a test may change it before the
	// gateway discovers it.
	Metadata map[string]any
	// Subject is who signs in at the authorization endpoint, and Scope
	// what a token grants when the client asks for none.
	Subject, Scope string
	kid            string

	mu      sync.Mutex
	clients map[string][]string // client id -> its redirect URIs
	codes   map[string]grant    // one-use authorization codes
	// Issued counts the access tokens the token endpoint issued.
	Issued int
	// Revoked are the tokens the revocation endpoint was sent (RFC 7009).
	Revoked []string
	// granted is the last client credentials request.
	granted Granted
	// IDTokenClaims override the ID token's claims (a nil value removes
	// one), for the tests of a relying party's checks.
	IDTokenClaims map[string]any
	// exchangeLife is how long an exchanged token lives (default five
	// minutes; SetExchangeLifetime); exchanges are those granted.
	exchangeLife time.Duration
	exchanges    []ExchangeRecord
}

// ClientCount is how many clients are registered, out of band or
// dynamically.
func (is *Issuer) ClientCount() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return len(is.clients)
}

// AddClient registers a client out of band (a relying party configured
// with its client id).
func (is *Issuer) AddClient(id string, redirects ...string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.clients[id] = redirects
}

// ClientCredentialsSecret is the secret of the one confidential client,
// "gw", that the client credentials grant serves (client_secret_basic).
const ClientCredentialsSecret = "s3cret-of-the-gateway"

// Granted is what a client credentials request asked for.
type Granted struct{ GrantType, ClientID, Resource, Scope string }

// Granted is the last client credentials request the issuer granted.
func (is *Issuer) Granted() Granted {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.granted
}

// grant is what an authorization code stands for.
type grant struct {
	client, redirect, challenge, resource, scope, nonce string
	subject                                             string // "": Subject
}

// grantJSON is a grant as a refresh token carries it: the refresh keeps
// the client, the scope and the resource it was granted (a grant of
// unexported fields marshalled to {}, and a refresh lost them).
type grantJSON struct {
	Client, Redirect, Challenge, Resource, Scope, Nonce string
	Subject                                             string `json:",omitempty"`
}

// New starts an issuer whose identifier has the given path ("" or
// "/tenant"), stopped when the test ends.
func New(t testing.TB, path string) *Issuer {
	t.Helper()
	is := &Issuer{kid: "k1", Subject: "person@test-idp", clients: map[string][]string{}, codes: map[string]grant{}}
	mux := http.NewServeMux()
	is.Server = httptest.NewServer(mux)
	t.Cleanup(is.Server.Close)
	is.ID = is.Server.URL + path
	is.Metadata = map[string]any{
		"issuer":                                is.ID,
		"jwks_uri":                              is.Server.URL + "/jwks",
		"authorization_endpoint":                is.ID + "/authorize",
		"token_endpoint":                        is.ID + "/token",
		"registration_endpoint":                 is.ID + "/register",
		"revocation_endpoint":                   is.ID + "/revoke",
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials", TokenExchangeGrant},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"response_types_supported":              []string{"code"},
		"code_challenge_methods_supported":      []string{"S256"},
	}
	mux.HandleFunc("GET /.well-known/oauth-authorization-server"+path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(is.Metadata)
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		pub := key().PublicKey
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "kid": is.kid, "use": "sig", "alg": "RS256",
			"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()),
		}}})
	})
	mux.HandleFunc("POST "+path+"/register", is.register)
	mux.HandleFunc("GET "+path+"/authorize", is.authorize)
	mux.HandleFunc("POST "+path+"/token", is.token)
	mux.HandleFunc("POST "+path+"/revoke", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		is.mu.Lock()
		is.Revoked = append(is.Revoked, r.PostForm.Get("token"))
		is.mu.Unlock()
	})
	return is
}

// RevokedTokens are the tokens the revocation endpoint was sent.
func (is *Issuer) RevokedTokens() []string {
	is.mu.Lock()
	defer is.mu.Unlock()
	return append([]string(nil), is.Revoked...)
}

// register takes a public client's registration (RFC 7591).
func (is *Issuer) register(w http.ResponseWriter, r *http.Request) {
	var md map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&md); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata")
		return
	}
	var uris []string
	raw, _ := md["redirect_uris"].([]any)
	for _, u := range raw {
		if s, ok := u.(string); ok {
			uris = append(uris, s)
		}
	}
	if len(uris) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri")
		return
	}
	id := "client-" + rand.Text()[:12]
	is.mu.Lock()
	is.clients[id] = uris
	is.mu.Unlock()
	md["client_id"] = id
	md["client_id_issued_at"] = time.Now().Unix()
	md["token_endpoint_auth_method"] = "none"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(md)
}

// authorize approves at once, as the login_hint when there is one (a
// test's stand-in for the person who signs in), else as Subject, and
// redirects with a code.
func (is *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	is.mu.Lock()
	uris, known := is.clients[q.Get("client_id")]
	is.mu.Unlock()
	redirect := q.Get("redirect_uri")
	switch {
	case !known:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case !slices.Contains(uris, redirect):
		http.Error(w, "redirect_uri is not one the client registered", http.StatusBadRequest) // never redirect to it
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "authorization code with PKCE S256 only", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	is.mu.Lock()
	is.codes[code] = grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scope: q.Get("scope"), nonce: q.Get("nonce"), subject: q.Get("login_hint")}
	is.mu.Unlock()
	to, _ := url.Parse(redirect)
	v := to.Query()
	v.Set("code", code)
	if st := q.Get("state"); st != "" {
		v.Set("state", st)
	}
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

// token exchanges a code (once, with its verifier, for the same client,
// redirect URI and resource) or a refresh token for an access token
// whose audience is the resource.
func (is *Issuer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	var g grant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		is.mu.Lock()
		var ok bool
		g, ok = is.codes[r.PostForm.Get("code")]
		delete(is.codes, r.PostForm.Get("code")) // one use, whatever follows
		is.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.client != r.PostForm.Get("client_id") || g.redirect != r.PostForm.Get("redirect_uri") ||
			b64(sum[:]) != g.challenge || (r.PostForm.Has("resource") && r.PostForm.Get("resource") != g.resource) {
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
	case "client_credentials":
		id, secret, ok := r.BasicAuth()
		if !ok || id != "gw" || secret != ClientCredentialsSecret {
			oauthError(w, http.StatusUnauthorized, "invalid_client")
			return
		}
		g = grant{client: id, resource: r.PostForm.Get("resource"), scope: r.PostForm.Get("scope")}
		is.mu.Lock()
		is.granted = Granted{GrantType: "client_credentials", ClientID: id, Resource: g.resource, Scope: g.scope}
		is.mu.Unlock()
	case "refresh_token":
		var err error
		if g, err = is.refreshGrant(r.PostForm.Get("refresh_token")); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
	case TokenExchangeGrant:
		is.exchange(w, r)
		return
	case JWTBearerGrant:
		var ok bool
		if g, ok = is.idJAGGrant(w, r); !ok {
			return
		}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	scope := cmp.Or(g.scope, is.Scope)
	claims := map[string]any{"sub": cmp.Or(g.subject, is.Subject), "scope": scope, "client_id": g.client}
	if g.resource != "" {
		claims["aud"] = g.resource
	}
	access := is.tokenFor(claims)
	refresh, _ := json.Marshal(grantJSON{g.client, g.redirect, g.challenge, g.resource, g.scope, g.nonce, g.subject})
	is.mu.Lock()
	is.Issued++
	is.mu.Unlock()
	answer := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 300,
		"scope": scope, "refresh_token": is.tokenFor(map[string]any{"typ": "refresh", "grant": string(refresh), "exp": time.Now().Add(time.Hour).Unix()})}
	if slices.Contains(strings.Fields(g.scope), "openid") {
		// OpenID Connect: who signed in, for the client, with its nonce.
		id := map[string]any{"sub": is.Subject, "email": is.Subject, "aud": g.client, "nonce": g.nonce}
		is.mu.Lock()
		for k, v := range is.IDTokenClaims {
			id[k] = v
		}
		is.mu.Unlock()
		answer["id_token"] = is.tokenFor(id)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(answer)
}

// TokenExchangeGrant is RFC 8693's grant_type.
const TokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"

// ExchangeRecord is one token exchange the issuer granted.
type ExchangeRecord struct{ Subject, Audience, Resource, SubjectTokenType string }

// SetExchangeLifetime makes the tokens exchanged from now on live d.
func (is *Issuer) SetExchangeLifetime(d time.Duration) {
	is.mu.Lock()
	is.exchangeLife = d
	is.mu.Unlock()
}

// Exchanges are the token exchanges granted so far, oldest first.
func (is *Issuer) Exchanges() []ExchangeRecord {
	is.mu.Lock()
	defer is.mu.Unlock()
	return slices.Clone(is.exchanges)
}

// exchange is RFC 8693's token exchange for the confidential client "gw"
// (client_secret_basic). The subject token is one this issuer signed,
// unexpired, of an access token, JWT or ID token type. The token given is
// of the same subject, for the audience asked for (else the resource),
// and says the gateway acts for the subject (act, RFC 8693 §4.1). It
// lives five minutes, or what SetExchangeLifetime says.
func (is *Issuer) exchange(w http.ResponseWriter, r *http.Request) {
	if id, secret, ok := r.BasicAuth(); !ok || id != "gw" || secret != ClientCredentialsSecret {
		oauthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	f := r.PostForm
	switch f.Get("subject_token_type") {
	case "urn:ietf:params:oauth:token-type:access_token", "urn:ietf:params:oauth:token-type:jwt", "urn:ietf:params:oauth:token-type:id_token":
	default:
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(f.Get("subject_token"), claims, func(*jwt.Token) (any, error) { return &key().PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(is.ID), jwt.WithExpirationRequired()); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	sub, _ := claims["sub"].(string)
	aud := cmp.Or(f.Get("audience"), f.Get("resource"))
	if sub == "" || aud == "" {
		oauthError(w, http.StatusBadRequest, "invalid_target")
		return
	}
	is.mu.Lock()
	life := cmp.Or(is.exchangeLife, 5*time.Minute)
	is.mu.Unlock()
	issued := "urn:ietf:params:oauth:token-type:access_token"
	var access string
	if f.Get("requested_token_type") == IDJAGType {
		// An ID-JAG for the authorization server named as the audience:
		// who signed in, for which resource (the MCP enterprise-managed
		// authorization extension).
		issued = IDJAGType
		access = is.sign(map[string]any{"sub": sub, "aud": aud, "resource": f.Get("resource"), "client_id": "gw",
			"exp": time.Now().Add(life).Unix()}, "oauth-id-jag+jwt")
	} else {
		access = is.tokenFor(map[string]any{"sub": sub, "aud": aud, "act": map[string]any{"sub": "gw"}, "exp": time.Now().Add(life).Unix()})
	}
	is.mu.Lock()
	is.exchanges = append(is.exchanges, ExchangeRecord{Subject: sub, Audience: f.Get("audience"), Resource: f.Get("resource"), SubjectTokenType: f.Get("subject_token_type")})
	is.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	tokenType := "Bearer"
	if issued == IDJAGType {
		tokenType = "N_A" // not an access token (RFC 8693 §2.2.1)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": access, "issued_token_type": issued,
		"token_type": tokenType, "expires_in": int(life.Seconds())})
}

// The JWT-bearer grant (RFC 7523) and the ID-JAG token type.
const (
	JWTBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	IDJAGType      = "urn:ietf:params:oauth:token-type:id-jag"
)

// idJAGGrant takes the JWT-bearer grant of the client "gw"
// (client_secret_basic) whose assertion is an ID-JAG for this issuer
// (signed by any issuer of the package, typ oauth-id-jag+jwt, unexpired):
// a grant of its subject for its resource. It answers the refusal itself.
func (is *Issuer) idJAGGrant(w http.ResponseWriter, r *http.Request) (grant, bool) {
	if id, secret, ok := r.BasicAuth(); !ok || id != "gw" || secret != ClientCredentialsSecret {
		oauthError(w, http.StatusUnauthorized, "invalid_client")
		return grant{}, false
	}
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(r.PostForm.Get("assertion"), claims, func(*jwt.Token) (any, error) { return &key().PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithAudience(is.ID), jwt.WithExpirationRequired())
	if err != nil || tok.Header["typ"] != "oauth-id-jag+jwt" {
		oauthError(w, http.StatusBadRequest, "invalid_grant")
		return grant{}, false
	}
	sub, _ := claims["sub"].(string)
	resource, _ := claims["resource"].(string)
	is.mu.Lock()
	is.granted = Granted{GrantType: JWTBearerGrant, ClientID: "gw", Resource: resource}
	is.mu.Unlock()
	return grant{client: "gw", resource: resource, subject: sub}, true
}

// refreshGrant reads the grant a refresh token this issuer signed carries.
func (is *Issuer) refreshGrant(tok string) (grant, error) {
	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return &key().PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(is.ID)); err != nil || claims["typ"] != "refresh" {
		return grant{}, errors.New("not a refresh token of this issuer")
	}
	var j grantJSON
	s, _ := claims["grant"].(string)
	err := json.Unmarshal([]byte(s), &j)
	return grant{j.Client, j.Redirect, j.Challenge, j.Resource, j.Scope, j.Nonce, j.Subject}, err
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Token mints an access token with claims; iss, iat, exp (in five
// minutes) and a jti are filled in unless given. A nil value removes a
// claim.
func (is *Issuer) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
	return is.tokenFor(claims)
}

func (is *Issuer) tokenFor(claims map[string]any) string { return is.sign(claims, "") }

// sign is tokenFor with the JWT header's typ ("": none).
func (is *Issuer) sign(claims map[string]any, typ string) string {
	now := time.Now()
	c := jwt.MapClaims{"iss": is.ID, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": rand.Text()}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	tok.Header["kid"] = is.kid
	if typ != "" {
		tok.Header["typ"] = typ
	}
	s, err := tok.SignedString(key())
	if err != nil {
		panic(err) // an RSA key of ours signs
	}
	return s
}

// Scope is scopes as a token's scope claim holds them.
func Scope(scopes ...string) string { return strings.Join(scopes, " ") }

// Claim is a string claim of a JWT, read without verifying it ("" for
// none): what a test's resource, trusting its one issuer, reads of a token.
func Claim(tok, name string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return ""
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	_ = json.Unmarshal(raw, &c)
	s, _ := c[name].(string)
	return s
}

// Protect serves h as a protected resource of the issuer, stopped when the
// test ends: its resource metadata (RFC 9728) names the issuer, and a
// request without a token the issuer minted for it is answered 401 naming
// that metadata. It returns the resource's URL (its path /mcp).
func (is *Issuer) Protect(t testing.TB, h http.Handler) string {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	resource, metadata := srv.URL+"/mcp", srv.URL+"/.well-known/oauth-protected-resource/mcp"
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": resource, "authorization_servers": []string{is.ID}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || Claim(tok, "aud") != resource {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+metadata+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	return resource
}
