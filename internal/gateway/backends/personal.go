// personal.go gives a per_user backend's calls each principal's own
// credential. Every call reads the caller's from the store, so that one
// stored, replaced or deleted on any replica counts from the next call;
// the principal's upstream session (sessions.go) was opened with it, and
// one opened with another is retired. A call without one is answered an
// error that says where to store one, never -32603.

package backends

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// CredentialSource is where per_user backends find each principal's own
// credential (personal.Credentials).
type CredentialSource interface {
	// Get is principal's credential for backend; ok is false for none.
	Get(ctx context.Context, principal, backend string) (value string, ok bool, err error)
}

// personal is the calling principal and their credential for b.
func (b *Backend) personal(ctx context.Context, r *mcp.Request) (principal, value string, err error) {
	id, _ := mcp.IdentityFrom(ctx)
	principal = id.Budget()
	if b.opts.Credentials == nil {
		return "", "", b.credentialRequired()
	}
	value, ok, err := b.opts.Credentials.Get(ctx, principal, b.spec.Name)
	if err != nil {
		b.log.Error("backend: a principal's credential could not be read", "err", err)
		return "", "", &catalogue.RouteError{Shown: "your credential for it could not be read", Err: err}
	}
	if !ok {
		return "", "", b.credentialRequired()
	}
	if r != nil {
		r.SetActingAs("vault:" + b.spec.Name)
	}
	return principal, value, nil
}

// credentialRequired is the answer to a call whose principal has stored
// no credential for b: the URL elicitation required error (2025-11-25),
// naming the page where they store one. A client that knows it offers to
// open the page; any other shows the message, which names the page too.
func (b *Backend) credentialRequired() error {
	var page string
	if b.opts.CredentialsPage != nil {
		page = b.opts.CredentialsPage()
	}
	msg := "Backend " + b.spec.Name + " acts as you, and you have stored no credential for it."
	if page != "" {
		msg += " Store yours at " + page + " (My credentials), then call again."
	} else {
		msg += " Ask an admin to store yours (mcpgate credentials set " + b.spec.Name + " --for YOU), then call again."
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	data := map[string]any{"backend": b.spec.Name, "kind": mcp.KindCredentialRequired}
	if page != "" {
		data["elicitations"] = []map[string]string{{"mode": "url", "elicitationId": hex.EncodeToString(id[:]), "url": page, "message": msg}}
	}
	return jsonrpc.NewError(mcp.CodeURLElicitationRequired, msg, data)
}

// PerUser reports whether b gives each principal their own credential,
// and where it goes: a header (http, sse) or a variable (stdio, process).
func (b *Backend) PerUser() (header, env string, ok bool) {
	return b.spec.CredentialHeader, b.spec.CredentialEnv, b.spec.Identity.PerUser()
}
