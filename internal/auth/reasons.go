// reasons.go names why a request was refused: a stable code for logs and
// metrics, and the phrase the client reads. Both are fixed strings chosen
// here, never text built from what the client sent, so a credential — or
// anything else from the request — cannot be echoed back or logged by way
// of an error message.

package auth

import (
	"errors"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth/bearer"
)

// ErrUnknownRole is a credential, otherwise good, whose role the
// configuration does not know.
var ErrUnknownRole = errors.New("auth: role not known")

// errNoTokens and errNoJWT refuse a credential of a kind the gateway does
// not accept. A request without a credential to check gets one of package
// bearer's errors instead.
var (
	errNoTokens = errors.New("auth: service tokens not accepted")
	errNoJWT    = errors.New("auth: JWTs not accepted")
)

type reason struct {
	code    string // log key "reason"; stable
	message string // what the client reads
}

// presented reports whether the client sent a bearer credential at all,
// which decides whether the challenge says error="invalid_token".
func (r reason) presented() bool {
	return r.code != "missing_credential" && r.code != "malformed_header"
}

// reasonFor classifies an error from authentication. The order matters
// where errors wrap several sentinels: the most specific comes first.
func reasonFor(err error) reason {
	for _, c := range []struct {
		target error
		reason reason
	}{
		{bearer.ErrNone, reason{"missing_credential", "a bearer token is required"}},
		{bearer.ErrMalformed, reason{"malformed_header", "the Authorization header is not a bearer token"}},
		{errNoTokens, reason{"tokens_disabled", "service tokens are not accepted here"}},
		{errNoJWT, reason{"jwt_disabled", "JWTs are not accepted here"}},
		{ErrUnknownToken, reason{"unknown_token", "unknown token"}},
		{ErrTokenRevoked, reason{"token_revoked", "token revoked"}},
		{ErrTokenExpired, reason{"token_expired", "token expired"}},
		{ErrUnknownRole, reason{"unknown_role", "the token's role is not known here"}},
		{ErrMissingRole, reason{"missing_role", "the token carries no role"}},
		{ErrMissingSubject, reason{"missing_subject", "the token names no subject"}},
		{ErrUnknownKey, reason{"unknown_key", "no key for the token's kid"}},
		{ErrUntrustedIssuer, reason{"untrusted_issuer", "the token's issuer is not trusted here"}},
		{ErrInsufficientScope, reason{"insufficient_scope", "the token's scopes grant no role here"}},
		{jwt.ErrTokenMalformed, reason{"malformed_token", "malformed token"}},
		{jwt.ErrTokenExpired, reason{"token_expired", "token expired"}},
		{jwt.ErrTokenNotValidYet, reason{"token_not_yet_valid", "token not valid yet"}},
		{jwt.ErrTokenUsedBeforeIssued, reason{"token_not_yet_valid", "token not valid yet"}},
		{jwt.ErrTokenInvalidIssuer, reason{"wrong_issuer", "issuer not accepted"}},
		{jwt.ErrTokenInvalidAudience, reason{"wrong_audience", "audience not accepted"}},
		{jwt.ErrTokenRequiredClaimMissing, reason{"missing_claim", "a required claim (exp, iss or aud) is missing"}},
		{jwt.ErrTokenSignatureInvalid, reason{"bad_signature", "signature or algorithm not accepted"}},
		{jwt.ErrTokenUnverifiable, reason{"bad_signature", "signature or algorithm not accepted"}},
	} {
		if errors.Is(err, c.target) {
			return c.reason
		}
	}
	return reason{"invalid_token", "invalid token"}
}
