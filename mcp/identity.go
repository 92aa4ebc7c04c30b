// identity.go carries the authenticated caller through a request's context.
// Authentication (an HTTP middleware, or configuration for stdio) puts it
// there; the gate reads it; transports bind sessions to it.

package mcp

import "context"

// Identity is who is calling, as authentication resolved them.
type Identity struct {
	Subject string // user or service name
	Role    string // role name as configured (mapped onto viewer/editor/admin by the gate)
	TokenID string // the credential's id, never the credential itself
}

// Key identifies the principal a session is bound to.
func (id Identity) Key() string { return id.Subject + "\x00" + id.TokenID }

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity in ctx and whether there is one.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}
