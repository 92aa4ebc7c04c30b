// jwt.go verifies JSON Web Tokens issued by someone else (an identity
// provider, or a script holding the shared secret) and turns their claims
// into an mcp.Identity. One verifier trusts one algorithm and one key
// source. Letting the token say how it is signed is how JWT libraries have
// been broken: `alg: none`, or an HS256 token "signed" with the RSA public
// key as the HMAC secret.

package auth

import (
	"cmp"
	"context"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/mcp"
)

// Ways a JWT that is correctly signed still fails to name an identity.
var (
	ErrMissingSubject = errors.New("auth: token names no subject")
	ErrMissingRole    = errors.New("auth: token carries no role")
)

// JWTConfig says which JWTs to trust.
type JWTConfig struct {
	Algorithm    string        // "HS256", "RS256" or "ES256"; the only one accepted
	Secret       []byte        // HS256: the shared secret, at least 32 bytes
	PublicKeyPEM []byte        // RS256/ES256: the public key (PKIX or certificate), as read from a file
	JWKSURL      string        // RS256/ES256: where the provider publishes its keys (instead of PublicKeyPEM)
	Issuer       string        // checked (and required) when set
	Audience     string        // checked (and required) when set
	RoleClaim    string        // claim holding the role name; default "role"
	SubjectClaim string        // claim holding the subject; default "sub"
	Leeway       time.Duration // clock skew allowed on exp, nbf and iat
	HTTPClient   *http.Client  // for JWKS; default: a client with a 10s timeout
}

// JWTVerifier checks JWTs against a JWTConfig. It is safe for concurrent
// use.
type JWTVerifier struct {
	alg          string
	roleClaim    string
	subjectClaim string
	opts         []jwt.ParserOption
	static       any   // []byte, *rsa.PublicKey or *ecdsa.PublicKey; nil with JWKS
	jwks         *jwks // nil without JWKS
}

// minHMACSecret is RFC 7518 §3.2's floor for HS256: a key as long as the
// hash output. A shorter secret can be brute-forced from one token.
const minHMACSecret = 32

// minRSABits refuses keys that are no longer considered safe.
const minRSABits = 2048

// NewJWTVerifier checks cfg and, for a JWKS URL, fetches the key set once
// (with ctx) so that a wrong URL fails at startup rather than at the first
// request.
func NewJWTVerifier(ctx context.Context, cfg JWTConfig) (*JWTVerifier, error) {
	v := &JWTVerifier{
		alg:          cfg.Algorithm,
		roleClaim:    cmp.Or(cfg.RoleClaim, "role"),
		subjectClaim: cmp.Or(cfg.SubjectClaim, "sub"),
		opts: []jwt.ParserOption{
			jwt.WithValidMethods([]string{cfg.Algorithm}),
			jwt.WithExpirationRequired(),
			jwt.WithLeeway(cfg.Leeway),
		},
	}
	if cfg.Issuer != "" {
		v.opts = append(v.opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		v.opts = append(v.opts, jwt.WithAudience(cfg.Audience))
	}
	var err error
	switch cfg.Algorithm {
	case "HS256":
		if len(cfg.PublicKeyPEM) > 0 || cfg.JWKSURL != "" {
			return nil, errors.New("auth: jwt: HS256 takes a secret, not a public key or a JWKS URL")
		}
		if len(cfg.Secret) < minHMACSecret {
			return nil, fmt.Errorf("auth: jwt: an HS256 secret needs at least %d bytes", minHMACSecret)
		}
		v.static = cfg.Secret
	case "RS256", "ES256":
		switch {
		case len(cfg.Secret) > 0:
			return nil, fmt.Errorf("auth: jwt: %s takes a public key, not a secret", cfg.Algorithm)
		case (len(cfg.PublicKeyPEM) > 0) == (cfg.JWKSURL != ""):
			return nil, fmt.Errorf("auth: jwt: %s needs exactly one of a public key file and a JWKS URL", cfg.Algorithm)
		case cfg.JWKSURL != "":
			v.jwks, err = newJWKS(ctx, cfg.JWKSURL, cfg.Algorithm, cfg.HTTPClient)
		default:
			v.static, err = parsePublicKeyPEM(cfg.Algorithm, cfg.PublicKeyPEM)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("auth: jwt: algorithm %q is not one of HS256, RS256, ES256", cfg.Algorithm)
	}
	return v, nil
}

// Verify checks token at now and returns the identity it names. The role
// is returned as the token states it; whether it is a known role is the
// caller's question (see RoleCheck).
func (v *JWTVerifier) Verify(ctx context.Context, token string, now time.Time) (mcp.Identity, error) {
	id, _, err := v.verify(ctx, token, now)
	return id, err
}

// verify is Verify, also returning the token's exp (a stream held open
// with it ends then).
func (v *JWTVerifier) verify(ctx context.Context, token string, now time.Time) (mcp.Identity, time.Time, error) {
	claims, err := v.claims(ctx, token, now)
	if err != nil {
		return mcp.Identity{}, time.Time{}, err
	}
	role, _ := claims[v.roleClaim].(string)
	return v.identity(claims, token, role)
}

// claims checks token's signature and registered claims (exp required,
// nbf, iat, and the issuer and audience when configured) at now, and
// returns its claims.
func (v *JWTVerifier) claims(ctx context.Context, token string, now time.Time) (jwt.MapClaims, error) {
	opts := append(v.opts[:len(v.opts):len(v.opts)], jwt.WithTimeFunc(func() time.Time { return now }))
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser(opts...).ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		// WithValidMethods has already refused any other algorithm; this
		// second check keeps a key from ever meeting a method it was not
		// meant for, should the options change.
		if t.Method.Alg() != v.alg {
			return nil, jwt.ErrTokenSignatureInvalid
		}
		if v.jwks != nil {
			kid, _ := t.Header["kid"].(string)
			return v.jwks.key(ctx, kid, now)
		}
		return v.static, nil
	})
	if err != nil {
		return nil, fmt.Errorf("auth: jwt: %w", err)
	}
	return claims, nil
}

// identity is who verified claims name, with role (which the caller read
// from them), and when the token expires.
func (v *JWTVerifier) identity(claims jwt.MapClaims, token, role string) (mcp.Identity, time.Time, error) {
	sub, _ := claims[v.subjectClaim].(string)
	if sub == "" {
		return mcp.Identity{}, time.Time{}, ErrMissingSubject
	}
	if role == "" {
		return mcp.Identity{}, time.Time{}, ErrMissingRole
	}
	id, _ := claims["jti"].(string)
	if id == "" {
		id = jwtFingerprint(token)
	}
	var exp time.Time
	if e, err := claims.GetExpirationTime(); err == nil && e != nil {
		exp = e.Time
	}
	// Each token of a subject is its own credential (its jti), but the
	// subject is the principal: a fresh token does not buy a fresh budget.
	iss, _ := claims["iss"].(string)
	return mcp.Identity{Subject: sub, Role: role, TokenID: id, Principal: SubjectPrincipal(iss, sub)}, exp, nil
}

// jwtFingerprint names a token without a jti, for logs, audit records and
// session binding: short enough that it cannot stand in for the token.
func jwtFingerprint(token string) string {
	h := sha256.Sum256([]byte(token))
	return "jwt:" + hex.EncodeToString(h[:6])
}

// parsePublicKeyPEM reads the public key for alg and refuses one of
// another type or strength.
func parsePublicKeyPEM(alg string, pemBytes []byte) (any, error) {
	if alg == "RS256" {
		k, err := jwt.ParseRSAPublicKeyFromPEM(pemBytes)
		if err != nil {
			return nil, fmt.Errorf("auth: jwt: RS256 public key: %w", err)
		}
		return k, checkRSA(k)
	}
	k, err := jwt.ParseECPublicKeyFromPEM(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("auth: jwt: ES256 public key: %w", err)
	}
	if k.Curve != elliptic.P256() {
		return nil, fmt.Errorf("auth: jwt: ES256 needs a P-256 key, not %s", k.Curve.Params().Name)
	}
	return k, nil
}

func checkRSA(k *rsa.PublicKey) error {
	if k.N.BitLen() < minRSABits {
		return fmt.Errorf("auth: jwt: RSA key of %d bits; at least %d needed", k.N.BitLen(), minRSABits)
	}
	return nil
}
