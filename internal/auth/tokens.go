// tokens.go mints service tokens and names the ways verifying one fails.
// A token is shown once, at creation; what is stored is its SHA-256, so a
// leaked database does not leak working credentials.

package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/textcut"
)

// TokenPrefix starts every service token, so that a token is recognisable
// in a config file or a secret scanner, and so that the authenticator can
// tell it from a JWT without trying both.
const TokenPrefix = "mcpg_"

// TokenIDPrefix starts every token's public id.
const TokenIDPrefix = "tok_"

// A principal (mcp.Identity.Principal) is a service token's id — the
// token's own and every grant's proven with it: an id, so that no string
// is made per request — or a subject (SubjectPrincipal). Neither holds a
// NUL byte, which every Identity.Key does: a budget of one is never the
// other's.

// SubjectPrincipal is the principal of subject at issuer: a JWT's, or a
// grant's made through an upstream provider.
func SubjectPrincipal(issuer, subject string) string { return "subject:" + issuer + "\x01" + subject }

// PrincipalToken is the service token a principal is, if it is one.
func PrincipalToken(principal string) (id string, ok bool) {
	return principal, strings.HasPrefix(principal, TokenIDPrefix)
}

const (
	secretBytes = 32                    // 256 bits of entropy
	tokenLen    = len(TokenPrefix) + 43 // base64url of 32 bytes, unpadded
	idChars     = 12                    // base32 characters after "tok_" (60 bits)
)

// Ways verifying a service token fails. Revoked and expired come with the
// token's record, so that a caller can log which token it was.
var (
	ErrUnknownToken = errors.New("auth: unknown token")
	ErrTokenRevoked = errors.New("auth: token revoked")
	ErrTokenExpired = errors.New("auth: token expired")
)

// NewToken mints a token for name with role, expiring at expires (zero:
// never). It returns the secret, to be shown once and never stored, and the
// record to store, which holds only the secret's hash.
func NewToken(name, role string, expires, now time.Time) (secret string, rec store.Token, err error) {
	switch {
	case strings.TrimSpace(name) == "":
		return "", store.Token{}, errors.New("auth: a token needs a name")
	case !textcut.Plain(name):
		return "", store.Token{}, errors.New("auth: a token's name is UTF-8 text without control characters")
	case strings.TrimSpace(role) == "":
		return "", store.Token{}, errors.New("auth: a token needs a role")
	case !expires.IsZero() && !expires.After(now):
		return "", store.Token{}, fmt.Errorf("auth: token expiry %s is not after now", expires.UTC().Format(time.RFC3339))
	}
	var b [secretBytes]byte
	if _, err := rand.Read(b[:]); err != nil { // never fails since Go 1.24; kept for the contract
		return "", store.Token{}, fmt.Errorf("auth: random token: %w", err)
	}
	secret = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	h := hashToken(secret)
	rec = store.Token{
		ID:        TokenIDPrefix + strings.ToLower(rand.Text()[:idChars]),
		Name:      name,
		Role:      role,
		Hash:      h[:],
		CreatedAt: now.UTC(),
	}
	if !expires.IsZero() {
		rec.ExpiresAt = expires.UTC()
	}
	return secret, rec, nil
}

// hashToken is what the store keeps of a token. A plain SHA-256, not a
// password hash (bcrypt, argon2): a slow, salted hash exists to make
// guessing a low-entropy password expensive, but a token is 256 random
// bits, which no amount of guessing reaches whatever the hash costs. A
// fast, unsalted hash keeps verification at a microsecond and lets the
// hash itself be the lookup key. An array: a lookup keeps it on the stack.
func hashToken(secret string) [sha256.Size]byte {
	var buf [64]byte // a token's bytes, on the stack (NewToken's are 48)
	return sha256.Sum256(append(buf[:0], secret...))
}

// looksLikeToken reports whether s has the shape NewToken gives a token,
// so that garbage is refused without hashing it.
func looksLikeToken(s string) bool {
	return len(s) == tokenLen && strings.HasPrefix(s, TokenPrefix)
}
