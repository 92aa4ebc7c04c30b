// Package oauthtest plays an external OAuth authorization server for the
// tests of the gateway as a protected resource: it publishes its metadata
// (RFC 8414, at the well-known path inserted before the issuer's path)
// and its keys (a JWKS), and mints RS256 access tokens (RFC 9068) with the
// claims a test asks for. It signs with a real key over a real socket;
// only who is signed in is made up.
package oauthtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
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
	kid      string
}

// New starts an issuer whose identifier has the given path ("" or
// "/tenant"), stopped when the test ends.
func New(t testing.TB, path string) *Issuer {
	t.Helper()
	is := &Issuer{kid: "k1"}
	mux := http.NewServeMux()
	is.Server = httptest.NewServer(mux)
	t.Cleanup(is.Server.Close)
	is.ID = is.Server.URL + path
	is.Metadata = map[string]any{
		"issuer":                           is.ID,
		"jwks_uri":                         is.Server.URL + "/jwks",
		"authorization_endpoint":           is.ID + "/authorize",
		"token_endpoint":                   is.ID + "/token",
		"response_types_supported":         []string{"code"},
		"code_challenge_methods_supported": []string{"S256"},
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
	return is
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Token mints an access token with claims; iss, iat, exp (in five
// minutes) and a jti are filled in unless given. A nil value removes a
// claim.
func (is *Issuer) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
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
	s, err := tok.SignedString(key())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Scope is scopes as a token's scope claim holds them.
func Scope(scopes ...string) string { return strings.Join(scopes, " ") }
