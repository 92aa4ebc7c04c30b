// jwt_test.go pins what a JWT must be to name an identity: signed with the
// one pinned algorithm and the configured key, carrying exp, the
// configured issuer and audience, a subject and a role.

package auth_test

import (
	"context"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/mcp"
)

func hs256() auth.JWTConfig { return auth.JWTConfig{Algorithm: "HS256", Secret: hmacSecret} }

func rs256(t testing.TB) auth.JWTConfig {
	return auth.JWTConfig{Algorithm: "RS256", PublicKeyPEM: pemPublic(t, &rsaKey().PublicKey)}
}

func es256(t testing.TB) auth.JWTConfig {
	return auth.JWTConfig{Algorithm: "ES256", PublicKeyPEM: pemPublic(t, &ecKey().PublicKey)}
}

func with(cfg auth.JWTConfig, edit func(*auth.JWTConfig)) auth.JWTConfig {
	edit(&cfg)
	return cfg
}

func verifier(t testing.TB, cfg auth.JWTConfig) *auth.JWTVerifier {
	t.Helper()
	v, err := auth.NewJWTVerifier(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestJWTVerify(t *testing.T) {
	alice := mcp.Identity{Subject: "alice", Role: "editor"} // TokenID checked separately
	for _, c := range []struct {
		rule  string
		cfg   auth.JWTConfig
		token func(t testing.TB) string
		want  error        // nil: accepted
		id    mcp.Identity // when accepted
	}{
		{"HS256 signed with the configured secret is accepted", hs256(),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodHS256, hmacSecret, claims(), "") }, nil, alice},
		{"HS256 signed with another secret is refused", hs256(),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, []byte("another-secret-of-at-least-32-bytes!"), claims(), "")
			}, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"RS256 verified with the PEM public key is accepted", rs256(t),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodRS256, rsaKey(), claims(), "") }, nil, alice},
		{"RS256 signed with another key is refused", rs256(t),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodRS256, rsaOther(), claims(), "") }, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"ES256 verified with the PEM public key is accepted", es256(t),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodES256, ecKey(), claims(), "") }, nil, alice},
		{"ES256 signed with another key is refused", es256(t),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodES256, ecOther(), claims(), "") }, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},

		// The algorithm is pinned.
		{"HS256 is refused when RS256 is pinned", rs256(t),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodHS256, hmacSecret, claims(), "") }, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"RS256 is refused when ES256 is pinned", es256(t),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodRS256, rsaKey(), claims(), "") }, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"ES256 is refused when HS256 is pinned", hs256(),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodES256, ecKey(), claims(), "") }, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"RS384 is refused when RS256 is pinned", rs256(t),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodRS384, rsaKey(), claims(), "") }, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"alg none is refused when HS256 is pinned", hs256(),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(), "")
			}, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"alg none is refused when RS256 is pinned", rs256(t),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(), "")
			}, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"HS256 keyed with the RSA public key's PEM is refused (key confusion)", rs256(t),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, pemPublic(t, &rsaKey().PublicKey), claims(), "")
			}, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"HS256 keyed with the EC public key's PEM is refused (key confusion)", es256(t),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, pemPublic(t, &ecKey().PublicKey), claims(), "")
			}, jwt.ErrTokenSignatureInvalid, mcp.Identity{}},
		{"a token that is not a JWT is refused", hs256(),
			func(testing.TB) string { return "not.a.jwt" }, jwt.ErrTokenMalformed, mcp.Identity{}},

		// Time.
		{"a token without exp is refused", hs256(),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("exp", nil), "") },
			jwt.ErrTokenRequiredClaimMissing, mcp.Identity{}},
		{"an expired token is refused", hs256(),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("exp", now.Add(-time.Second).Unix()), "")
			}, jwt.ErrTokenExpired, mcp.Identity{}},
		{"a token expired within the leeway is accepted", with(hs256(), func(c *auth.JWTConfig) { c.Leeway = time.Minute }),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("exp", now.Add(-30*time.Second).Unix()), "")
			}, nil, alice},
		{"a token not valid yet is refused", hs256(),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("nbf", now.Add(time.Minute).Unix()), "")
			}, jwt.ErrTokenNotValidYet, mcp.Identity{}},

		// Issuer and audience.
		{"the configured issuer is accepted", with(hs256(), func(c *auth.JWTConfig) { c.Issuer = "https://idp" }),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("iss", "https://idp"), "")
			}, nil, alice},
		{"another issuer is refused when one is configured", with(hs256(), func(c *auth.JWTConfig) { c.Issuer = "https://idp" }),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("iss", "https://evil"), "")
			},
			jwt.ErrTokenInvalidIssuer, mcp.Identity{}},
		{"a missing issuer is refused when one is configured", with(hs256(), func(c *auth.JWTConfig) { c.Issuer = "https://idp" }),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodHS256, hmacSecret, claims(), "") },
			jwt.ErrTokenRequiredClaimMissing, mcp.Identity{}},
		{"any issuer is accepted when none is configured", hs256(),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("iss", "whoever"), "")
			}, nil, alice},
		{"the configured audience is accepted", with(hs256(), func(c *auth.JWTConfig) { c.Audience = "mcpgate" }),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("aud", "mcpgate"), "")
			}, nil, alice},
		{"an audience list holding the configured one is accepted", with(hs256(), func(c *auth.JWTConfig) { c.Audience = "mcpgate" }),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("aud", []string{"other", "mcpgate"}), "")
			}, nil, alice},
		{"another audience is refused when one is configured", with(hs256(), func(c *auth.JWTConfig) { c.Audience = "mcpgate" }),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("aud", "billing"), "")
			},
			jwt.ErrTokenInvalidAudience, mcp.Identity{}},
		{"a missing audience is refused when one is configured", with(hs256(), func(c *auth.JWTConfig) { c.Audience = "mcpgate" }),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodHS256, hmacSecret, claims(), "") },
			jwt.ErrTokenRequiredClaimMissing, mcp.Identity{}},

		// Subject and role.
		{"a token without a role is refused", hs256(),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("role", nil), "") }, auth.ErrMissingRole, mcp.Identity{}},
		{"a role that is not a string is refused", hs256(),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("role", []string{"admin"}), "")
			}, auth.ErrMissingRole, mcp.Identity{}},
		{"the role is read from the configured claim", with(hs256(), func(c *auth.JWTConfig) { c.RoleClaim = "mcp_role" }),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("mcp_role", "admin", "role", "viewer"), "")
			}, nil, mcp.Identity{Subject: "alice", Role: "admin"}},
		{"with a custom role claim, the default claim is not read", with(hs256(), func(c *auth.JWTConfig) { c.RoleClaim = "mcp_role" }),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodHS256, hmacSecret, claims(), "") }, auth.ErrMissingRole, mcp.Identity{}},
		{"the subject is read from the configured claim", with(hs256(), func(c *auth.JWTConfig) { c.SubjectClaim = "email" }),
			func(t testing.TB) string {
				return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("email", "a@example.com"), "")
			}, nil, mcp.Identity{Subject: "a@example.com", Role: "editor"}},
		{"a token without a subject is refused", hs256(),
			func(t testing.TB) string { return sign(t, jwt.SigningMethodHS256, hmacSecret, claims("sub", nil), "") }, auth.ErrMissingSubject, mcp.Identity{}},
	} {
		t.Run(c.rule, func(t *testing.T) {
			v := verifier(t, c.cfg)
			token := c.token(t)
			id, err := v.Verify(context.Background(), token, now)
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("err %v, want %v", err, c.want)
				}
				if id != (mcp.Identity{}) {
					t.Fatalf("refused, yet identity %+v", id)
				}
				if strings.Contains(err.Error(), token) {
					t.Fatal("the error holds the token")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id.Subject != c.id.Subject || id.Role != c.id.Role {
				t.Fatalf("identity %+v, want %+v", id, c.id)
			}
		})
	}
}

func TestJWTTokenID(t *testing.T) {
	v := verifier(t, hs256())
	withJTI := sign(t, jwt.SigningMethodHS256, hmacSecret, claims("jti", "abc-123"), "")
	if id, err := v.Verify(context.Background(), withJTI, now); err != nil || id.TokenID != "abc-123" {
		t.Fatalf("with jti: %+v, %v; want the jti as token id", id, err)
	}
	without := sign(t, jwt.SigningMethodHS256, hmacSecret, claims(), "")
	id, err := v.Verify(context.Background(), without, now)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(without))
	if want := "jwt:" + hex.EncodeToString(h[:])[:12]; id.TokenID != want {
		t.Fatalf("without jti: token id %q, want %q", id.TokenID, want)
	}
}

func TestNewJWTVerifierRefusesBadConfig(t *testing.T) {
	for _, c := range []struct {
		rule string
		cfg  auth.JWTConfig
	}{
		{"no algorithm", auth.JWTConfig{Secret: hmacSecret}},
		{"algorithm none", auth.JWTConfig{Algorithm: "none", Secret: hmacSecret}},
		{"an algorithm not offered", auth.JWTConfig{Algorithm: "HS512", Secret: hmacSecret}},
		{"HS256 without a secret", auth.JWTConfig{Algorithm: "HS256"}},
		{"HS256 with a secret under 32 bytes", auth.JWTConfig{Algorithm: "HS256", Secret: []byte("short")}},
		{"HS256 with a public key", with(rs256(t), func(c *auth.JWTConfig) { c.Algorithm = "HS256"; c.Secret = hmacSecret })},
		{"RS256 without a key", auth.JWTConfig{Algorithm: "RS256"}},
		{"RS256 with a secret", with(rs256(t), func(c *auth.JWTConfig) { c.Secret = hmacSecret })},
		{"RS256 with both a PEM and a JWKS URL", with(rs256(t), func(c *auth.JWTConfig) { c.JWKSURL = "http://127.0.0.1:1/jwks" })},
		{"RS256 with an EC key", auth.JWTConfig{Algorithm: "RS256", PublicKeyPEM: pemPublic(t, &ecKey().PublicKey)}},
		{"RS256 with a 1024-bit key", auth.JWTConfig{Algorithm: "RS256", PublicKeyPEM: pemPublic(t, &mustRSA(1024).PublicKey)}},
		{"RS256 with a PEM that is not a key", auth.JWTConfig{Algorithm: "RS256", PublicKeyPEM: []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")}},
		{"ES256 with an RSA key", auth.JWTConfig{Algorithm: "ES256", PublicKeyPEM: pemPublic(t, &rsaKey().PublicKey)}},
		{"ES256 with a P-384 key", auth.JWTConfig{Algorithm: "ES256", PublicKeyPEM: pemPublic(t, &mustEC(elliptic.P384()).PublicKey)}},
	} {
		t.Run(c.rule, func(t *testing.T) {
			if _, err := auth.NewJWTVerifier(context.Background(), c.cfg); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
