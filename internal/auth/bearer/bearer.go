// Package bearer reads the credential of an `Authorization: Bearer X`
// header: the gateway's authentication, its console and the proxy's wire
// token all take it from here, under the same rules.
package bearer

import (
	"errors"
	"net/http"
	"strings"
)

// Why a request carries no bearer credential to check.
var (
	ErrNone      = errors.New("auth: no credential")
	ErrMalformed = errors.New("auth: malformed Authorization header")
)

// Token returns the credential of `Authorization: Bearer X`; the scheme is
// case-insensitive (RFC 9110 §11.1). No Authorization header is ErrNone.
// Anything else is ErrMalformed: another scheme, an empty or spaced
// credential, or two Authorization headers (two are not a choice).
func Token(h http.Header) (string, error) {
	vals := h.Values("Authorization")
	switch len(vals) {
	case 0:
		return "", ErrNone
	case 1:
	default:
		return "", ErrMalformed
	}
	scheme, cred, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	cred = strings.TrimSpace(cred)
	if !strings.EqualFold(scheme, "Bearer") || cred == "" || strings.ContainsAny(cred, " \t") {
		return "", ErrMalformed
	}
	return cred, nil
}
