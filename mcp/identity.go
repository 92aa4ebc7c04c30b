// identity.go carries the authenticated caller through a request's context.
// Authentication (an HTTP middleware, or configuration for stdio) puts it
// there; the gate reads it; transports bind sessions to it.

package mcp

import (
	"context"
	"log/slog"
)

// Identity is who is calling, as authentication resolved them.
type Identity struct {
	Subject string // user or service name
	Role    string // role name as configured (mapped onto viewer/editor/admin by the gate)
	TokenID string // the credential's id, never the credential itself
	// Principal is who stands behind the credential: the service token's
	// id (its own, or the one an OAuth grant was proven with), the subject
	// of a grant made through an upstream provider or of a JWT
	// ("subject:…"). It never holds a NUL byte, which Key always does.
	// "": the credential is the principal.
	Principal string
	// View is the form of the catalogue the caller is served (ViewFull
	// when zero): what its route or its configuration chose.
	View View
	// Presented is the token the caller authenticated with, when it is
	// an identity provider's (a JWT, an OAuth access token of another
	// issuer): a per_user backend exchanges it for one of its own (RFC
	// 8693). "" for the gateway's own credentials.
	Presented Secret `json:"-"`
}

// Secret is a value never shown: fmt, log/slog and encoding/json print
// "[secret]"; Reveal is the value, for the one place that sends it.
type Secret string

// Reveal is the secret's value.
func (s Secret) Reveal() string { return string(s) }

func (Secret) String() string               { return "[secret]" }
func (Secret) GoString() string             { return "[secret]" }
func (Secret) LogValue() slog.Value         { return slog.StringValue("[secret]") }
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[secret]"`), nil }

// Key identifies the credential a session is bound to: a session opened
// with one grant is not another grant's, whoever holds both.
func (id Identity) Key() string { return id.Subject + "\x00" + id.TokenID }

// HasKey reports whether k is id.Key(), without making the key: a
// session's owner is checked on every request.
func (id Identity) HasKey(k string) bool {
	n := len(id.Subject)
	return len(k) == n+1+len(id.TokenID) && k[:n] == id.Subject && k[n] == 0 && k[n+1:] == id.TokenID
}

// Budget identifies the principal whose budgets a call spends — rate
// buckets, the cap on sessions: one person with one service token who
// mints grants at will spends one budget, not one per grant.
func (id Identity) Budget() string {
	if id.Principal != "" {
		return id.Principal // no string made per call: it is on every gated call's path
	}
	return id.Key()
}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return &identityCtx{Context: ctx, id: id}
}

// identityCtx carries an identity in one allocation: context.WithValue
// would box the Identity in a second one, on every request.
type identityCtx struct {
	context.Context
	id Identity
}

func (c *identityCtx) Value(key any) any {
	if key == (identityKey{}) {
		return &c.id
	}
	return c.Context.Value(key)
}

// IdentityFrom returns the identity in ctx and whether there is one.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	if id, ok := ctx.Value(identityKey{}).(*Identity); ok {
		return *id, true
	}
	return Identity{}, false
}
