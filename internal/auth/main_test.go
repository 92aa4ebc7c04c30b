// main_test.go holds what the auth tests share: a leak check, a token
// source that records what it was given, test keys, and a log buffer.

package auth_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// waitLimit bounds every wait on another goroutine: a deadlock becomes a
// failure. It is never a way to let time pass.
const waitLimit = 10 * time.Second

// fakeSource is a TokenSource in memory that keeps exactly what it was
// given, so a test can inspect what would have been stored.
type fakeSource struct {
	mu         sync.Mutex
	tokens     []store.Token
	loads      int
	loaded     chan struct{} // if set, offered a value after each Tokens call
	stale      []store.Token // if set, Tokens answers this instead (a replica that lags)
	failErr    error         // if set, every call fails with it
	duplicates int           // CreateToken calls to refuse as duplicates first
}

func (f *fakeSource) Tokens(context.Context) ([]store.Token, error) {
	f.mu.Lock()
	f.loads++
	out := f.tokens
	if f.stale != nil {
		out = f.stale
	}
	out = cloneAll(out)
	err := f.failErr
	f.mu.Unlock()
	select {
	case f.loaded <- struct{}{}:
	default: // nobody waiting (or no channel): never block a refresh loop
	}
	return out, err
}

func (f *fakeSource) CreateToken(_ context.Context, t store.Token) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failErr != nil {
		return f.failErr
	}
	if f.duplicates > 0 {
		f.duplicates--
		return fmt.Errorf("fake: id %s: %w", t.ID, store.ErrDuplicate)
	}
	for _, old := range f.tokens {
		if old.ID == t.ID || bytes.Equal(old.Hash, t.Hash) {
			return fmt.Errorf("fake: %w", store.ErrDuplicate)
		}
	}
	t.Hash = slices.Clone(t.Hash)
	f.tokens = append(f.tokens, t)
	return nil
}

func (f *fakeSource) RevokeToken(_ context.Context, id string, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failErr != nil {
		return f.failErr
	}
	for i := range f.tokens {
		if f.tokens[i].ID == id {
			if f.tokens[i].RevokedAt.IsZero() {
				f.tokens[i].RevokedAt = at
			}
			return nil
		}
	}
	return store.ErrNotFound
}

// add puts a record straight into the source, as another process would.
func (f *fakeSource) add(t store.Token) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = append(f.tokens, t)
}

func (f *fakeSource) snapshot() []store.Token {
	f.mu.Lock()
	defer f.mu.Unlock()
	return cloneAll(f.tokens)
}

func (f *fakeSource) loadCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loads
}

func cloneAll(ts []store.Token) []store.Token {
	out := slices.Clone(ts)
	for i := range out {
		out[i].Hash = slices.Clone(out[i].Hash)
	}
	return out
}

// Keys are generated once: RSA generation is slow under -race.
var (
	rsaKey   = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA(2048) })
	rsaOther = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA(2048) })
	ecKey    = sync.OnceValue(func() *ecdsa.PrivateKey { return mustEC(elliptic.P256()) })
	ecOther  = sync.OnceValue(func() *ecdsa.PrivateKey { return mustEC(elliptic.P256()) })
)

func mustRSA(bits int) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		panic(err)
	}
	return k
}

func mustEC(c elliptic.Curve) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

// pemPublic is pub as a PEM file would hold it.
func pemPublic(t testing.TB, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// hmacSecret is a valid HS256 secret (32 bytes).
var hmacSecret = []byte("0123456789abcdef0123456789abcdef")

// now is the fixed clock of the JWT tests.
var now = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

// claims are good claims at now, overridden by kv pairs; a nil value
// deletes the claim.
func claims(kv ...any) jwt.MapClaims {
	c := jwt.MapClaims{"sub": "alice", "role": "editor", "exp": now.Add(time.Hour).Unix(), "iat": now.Add(-time.Minute).Unix()}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(c, k)
		} else {
			c[k] = kv[i+1]
		}
	}
	return c
}

// sign returns c signed with method and key, with kid in the header when
// not empty.
func sign(t testing.TB, method jwt.SigningMethod, key any, c jwt.MapClaims, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// syncBuffer is a log sink that several handler goroutines may write to
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
