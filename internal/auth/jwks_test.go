// jwks_test.go pins the JWKS key source against a real HTTP server: keys
// are fetched once and cached by kid, a rotation is picked up by one
// refetch, and a flood of unknown kids cannot make us hammer the provider.

package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth"
)

// refetchWindow is the documented limit: one refetch per 10 seconds.
const refetchWindow = 10 * time.Second

// jwksServer publishes a key set that a test may change, and counts how
// often it is asked.
type jwksServer struct {
	*httptest.Server
	requests atomic.Int64

	mu     sync.Mutex
	keys   []map[string]string
	status int
}

func newJWKSServer(t *testing.T, keys ...map[string]string) *jwksServer {
	t.Helper()
	s := &jwksServer{keys: keys, status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		body, _ := json.Marshal(map[string]any{"keys": s.keys})
		status := s.status
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) publish(keys ...map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = keys
}

func (s *jwksServer) config(alg string) auth.JWTConfig {
	return auth.JWTConfig{Algorithm: alg, JWKSURL: s.URL + "/.well-known/jwks.json", HTTPClient: s.Client()}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(kid string, k *rsa.PublicKey) map[string]string {
	return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PublicKey) map[string]string {
	p, err := k.Bytes() // 0x04 || x || y
	if err != nil {
		panic(err)
	}
	return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(p[1:33]), "y": b64(p[33:])}
}

func TestJWKSVerifiesWithTheFetchedKey(t *testing.T) {
	for _, c := range []struct {
		alg    string
		method jwt.SigningMethod
		key    any
		jwk    map[string]string
	}{
		{"RS256", jwt.SigningMethodRS256, rsaKey(), rsaJWK("r1", &rsaKey().PublicKey)},
		{"ES256", jwt.SigningMethodES256, ecKey(), ecJWK("e1", &ecKey().PublicKey)},
	} {
		t.Run(c.alg, func(t *testing.T) {
			srv := newJWKSServer(t, c.jwk)
			v := verifier(t, srv.config(c.alg))
			for range 3 {
				id, err := v.Verify(context.Background(), sign(t, c.method, c.key, claims(), c.jwk["kid"]), now)
				if err != nil || id.Subject != "alice" {
					t.Fatalf("%+v, %v", id, err)
				}
			}
			if n := srv.requests.Load(); n != 1 {
				t.Fatalf("%d fetches, want 1: keys are cached", n)
			}
		})
	}
}

func TestJWKSTokenWithoutKidIsTriedAgainstEveryKey(t *testing.T) {
	srv := newJWKSServer(t, rsaJWK("other", &rsaOther().PublicKey), rsaJWK("main", &rsaKey().PublicKey))
	v := verifier(t, srv.config("RS256"))
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, rsaKey(), claims(), ""), now); err != nil {
		t.Fatal(err)
	}
}

func TestJWKSKeyRotationCausesOneRefetch(t *testing.T) {
	ctx := context.Background()
	srv := newJWKSServer(t, rsaJWK("2030-01", &rsaKey().PublicKey))
	v := verifier(t, srv.config("RS256"))
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, rsaKey(), claims(), "2030-01"), now); err != nil {
		t.Fatal(err)
	}

	// The provider rotates: a new key under a new kid.
	srv.publish(rsaJWK("2030-01", &rsaKey().PublicKey), rsaJWK("2030-06", &rsaOther().PublicKey))
	rotated := sign(t, jwt.SigningMethodRS256, rsaOther(), claims(), "2030-06")
	for range 3 {
		if _, err := v.Verify(ctx, rotated, now); err != nil {
			t.Fatalf("after rotation: %v", err)
		}
	}
	if n := srv.requests.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2: startup and one refetch for the new kid", n)
	}
}

func TestJWKSUnknownKidFloodCausesAtMostOneRefetchPerWindow(t *testing.T) {
	ctx := context.Background()
	srv := newJWKSServer(t, rsaJWK("real", &rsaKey().PublicKey))
	v := verifier(t, srv.config("RS256"))

	var wg sync.WaitGroup
	var accepted atomic.Int64
	for i := range 100 {
		token := sign(t, jwt.SigningMethodRS256, rsaKey(), claims(), fmt.Sprintf("made-up-%d", i))
		wg.Go(func() {
			if _, err := v.Verify(ctx, token, now.Add(time.Duration(i)*time.Millisecond)); !errors.Is(err, auth.ErrUnknownKey) {
				accepted.Add(1)
			}
		})
	}
	wg.Wait()
	if n := accepted.Load(); n != 0 {
		t.Fatalf("%d tokens with unknown kids not refused with ErrUnknownKey", n)
	}
	if n := srv.requests.Load(); n > 2 {
		t.Fatalf("%d fetches for 100 unknown kids, want at most startup + 1", n)
	}
	// A known kid is still served from the cache during the window.
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, rsaKey(), claims(), "real"), now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}

	// Once the window has passed, an unknown kid may refetch again — once.
	before := srv.requests.Load()
	later := now.Add(time.Second + refetchWindow)
	for i := range 10 {
		v.Verify(ctx, sign(t, jwt.SigningMethodRS256, rsaKey(), claims(), fmt.Sprintf("later-%d", i)), later)
	}
	if n := srv.requests.Load() - before; n != 1 {
		t.Fatalf("%d fetches after the window, want 1", n)
	}
}

func TestJWKSUsesOnlyKeysOfThePinnedAlgorithm(t *testing.T) {
	enc := rsaJWK("enc", &rsaKey().PublicKey)
	enc["use"] = "enc"
	rs384 := rsaJWK("rs384", &rsaKey().PublicKey)
	rs384["alg"] = "RS384"
	srv := newJWKSServer(t,
		ecJWK("ec", &ecKey().PublicKey),
		enc,
		rs384,
		rsaJWK("good", &rsaKey().PublicKey),
	)
	v := verifier(t, srv.config("RS256"))
	for _, c := range []struct {
		rule   string
		method jwt.SigningMethod
		key    any
		kid    string
		want   error
	}{
		{"an RSA signing key is used for RS256", jwt.SigningMethodRS256, rsaKey(), "good", nil},
		{"an EC key is not used for RS256", jwt.SigningMethodRS256, rsaKey(), "ec", auth.ErrUnknownKey},
		{"an encryption key is not used", jwt.SigningMethodRS256, rsaKey(), "enc", auth.ErrUnknownKey},
		{"a key for another algorithm is not used", jwt.SigningMethodRS256, rsaKey(), "rs384", auth.ErrUnknownKey},
		{"an ES256 token naming the EC key is refused", jwt.SigningMethodES256, ecKey(), "ec", jwt.ErrTokenSignatureInvalid},
	} {
		t.Run(c.rule, func(t *testing.T) {
			_, err := v.Verify(context.Background(), sign(t, c.method, c.key, claims(), c.kid), now)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
}

func TestJWKSFailureAtStartupIsAnError(t *testing.T) {
	broken := rsaJWK("bad", &rsaKey().PublicKey)
	broken["n"] = "!!not base64!!"
	offCurve := ecJWK("bad", &ecKey().PublicKey)
	offCurve["y"] = offCurve["x"]
	for _, c := range []struct {
		rule   string
		status int
		keys   []map[string]string
		alg    string
	}{
		{"the provider answers 500", http.StatusInternalServerError, nil, "RS256"},
		{"an RSA key that does not decode", http.StatusOK, []map[string]string{broken}, "RS256"},
		{"an EC point off the curve", http.StatusOK, []map[string]string{offCurve}, "ES256"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			srv := newJWKSServer(t, c.keys...)
			srv.mu.Lock()
			srv.status = c.status
			srv.mu.Unlock()
			if _, err := auth.NewJWTVerifier(context.Background(), srv.config(c.alg)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
