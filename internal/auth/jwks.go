// jwks.go fetches and caches an identity provider's public keys (a JSON Web
// Key Set, RFC 7517) by key id. A token naming a kid the cache does not
// hold triggers a refetch: that is how a key rotation reaches us. It
// happens at most once per refetchInterval. A flood of tokens with made-up
// kids so cannot turn the gateway into a load generator against the
// provider.

package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ErrUnknownKey is a JWT whose kid the key set does not hold, even after a
// refetch.
var ErrUnknownKey = errors.New("auth: no key for the token's kid")

const (
	refetchInterval = 10 * time.Second
	fetchTimeout    = 10 * time.Second
	maxJWKSBytes    = 1 << 20
)

// jwks is a cached key set holding only keys of one algorithm's type.
type jwks struct {
	url    string
	alg    string
	client *http.Client

	fetchMu     sync.Mutex // one fetch at a time; guards lastRefetch
	lastRefetch time.Time  // last refetch caused by an unknown kid

	mu   sync.RWMutex
	keys map[string]any // kid → *rsa.PublicKey or *ecdsa.PublicKey
}

func newJWKS(ctx context.Context, url, alg string, client *http.Client) (*jwks, error) {
	if client == nil {
		client = &http.Client{Timeout: fetchTimeout}
	}
	k := &jwks{url: url, alg: alg, client: client}
	if err := k.fetch(ctx); err != nil {
		return nil, err
	}
	return k, nil
}

// key returns the key for kid. A token without a kid is tried against
// every key in the set, as providers with a single key often omit it.
func (k *jwks) key(ctx context.Context, kid string, now time.Time) (any, error) {
	if key, ok := k.cached(kid); ok {
		return key, nil
	}
	if kid == "" {
		return nil, ErrUnknownKey
	}
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	// Another request may have refetched while this one waited.
	if key, ok := k.cached(kid); ok {
		return key, nil
	}
	if !k.lastRefetch.IsZero() && now.Sub(k.lastRefetch) < refetchInterval {
		return nil, ErrUnknownKey
	}
	// The window starts whether or not the fetch works: a provider that is
	// down is not helped by being asked again at once.
	k.lastRefetch = now
	// The fetch serves every later request too, so the caller hanging up
	// must not cancel it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	if err := k.fetch(ctx); err != nil {
		return nil, fmt.Errorf("%w (%w)", ErrUnknownKey, err)
	}
	if key, ok := k.cached(kid); ok {
		return key, nil
	}
	return nil, ErrUnknownKey
}

func (k *jwks) cached(kid string) (any, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if kid != "" {
		key, ok := k.keys[kid]
		return key, ok
	}
	set := jwt.VerificationKeySet{}
	for _, key := range k.keys {
		set.Keys = append(set.Keys, key)
	}
	return set, len(set.Keys) > 0
}

// fetch replaces the cache with the key set at k.url. A key the provider
// no longer publishes is dropped: it has been retired.
func (k *jwks) fetch(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return fmt.Errorf("auth: jwks: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return fmt.Errorf("auth: jwks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("auth: jwks: %s answered %s", k.url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("auth: jwks: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return fmt.Errorf("auth: jwks: key set over %d bytes", maxJWKSBytes)
	}
	keys, err := parseJWKS(body, k.alg)
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.keys = keys
	k.mu.Unlock()
	return nil
}

// jwk is the part of a JSON Web Key (RFC 7517, 7518 §6) we read.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`   // RSA modulus
	E   string `json:"e"`   // RSA exponent
	Crv string `json:"crv"` // EC curve
	X   string `json:"x"`   // EC point
	Y   string `json:"y"`
}

// parseJWKS returns the keys in a JWKS document usable with alg, by kid.
// Keys of another type, another algorithm, or for encryption are skipped,
// not errors: a provider's set often holds several kinds.
func parseJWKS(doc []byte, alg string) (map[string]any, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("auth: jwks: %w", err)
	}
	keys := map[string]any{}
	for _, j := range set.Keys {
		if (j.Use != "" && j.Use != "sig") || (j.Alg != "" && j.Alg != alg) {
			continue
		}
		var key any
		var err error
		switch {
		case alg == "RS256" && j.Kty == "RSA":
			key, err = j.rsa()
		case alg == "ES256" && j.Kty == "EC" && j.Crv == "P-256":
			key, err = j.ecdsaP256()
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("auth: jwks: key %q: %w", j.Kid, err)
		}
		keys[j.Kid] = key
	}
	return keys, nil
}

func (j jwk) rsa() (*rsa.PublicKey, error) {
	n, err := base64.RawURLEncoding.DecodeString(j.N)
	if err != nil {
		return nil, fmt.Errorf("n: %w", err)
	}
	e, err := base64.RawURLEncoding.DecodeString(j.E)
	if err != nil {
		return nil, fmt.Errorf("e: %w", err)
	}
	if len(e) == 0 || len(e) > 4 {
		return nil, errors.New("e: out of range")
	}
	var exp int
	for _, b := range e {
		exp = exp<<8 | int(b)
	}
	if exp < 3 || exp%2 == 0 {
		return nil, errors.New("e: not an odd exponent of at least 3")
	}
	k := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}
	return k, checkRSA(k)
}

func (j jwk) ecdsaP256() (*ecdsa.PublicKey, error) {
	x, err := base64.RawURLEncoding.DecodeString(j.X)
	if err != nil {
		return nil, fmt.Errorf("x: %w", err)
	}
	y, err := base64.RawURLEncoding.DecodeString(j.Y)
	if err != nil {
		return nil, fmt.Errorf("y: %w", err)
	}
	if len(x) != 32 || len(y) != 32 {
		return nil, errors.New("x and y must be 32 bytes for P-256")
	}
	// The uncompressed SEC 1 encoding; parsing it checks the point is on
	// the curve, which an attacker-chosen key must not be allowed to skip.
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
}

// KeySet is a provider's key set for a verifier outside this package
// (the built-in authorization server's upstream sign-in): fetched at
// first, refetched for an unknown kid as the gateway's own verifiers do.
type KeySet struct{ k *jwks }

// NewKeySet fetches the key set at url, keeping alg's keys (RS256 or
// ES256).
func NewKeySet(ctx context.Context, url, alg string, client *http.Client) (*KeySet, error) {
	k, err := newJWKS(ctx, url, alg, client)
	if err != nil {
		return nil, err
	}
	return &KeySet{k}, nil
}

// Key is the key for kid (every key, as a jwt.VerificationKeySet, for a
// token without one).
func (s *KeySet) Key(ctx context.Context, kid string, now time.Time) (any, error) {
	return s.k.key(ctx, kid, now)
}
