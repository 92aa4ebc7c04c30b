// noauth.go is the mode for local development: no credential, one
// configured identity for every request. It is safe only where nobody
// else can connect, so the command checks the listen address with
// CheckLoopback before it turns authentication off.

package auth

import (
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/mcpgate/mcpgate/internal/auth/bearer"
	"github.com/mcpgate/mcpgate/internal/loopback"
	"github.com/mcpgate/mcpgate/mcp"
)

// ErrNotLoopback is a listen address that other machines may reach.
var ErrNotLoopback = errors.New("auth: not a loopback address")

// NoAuth returns middleware that gives every request identity, whatever
// it carries. A bearer token it carries is kept as the token presented
// (unchecked: nobody is, here), for a per_user backend of exchange, whose
// identity provider checks it.
func NoAuth(identity mcp.Identity) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := identity
			if cred, err := bearer.Token(r.Header); err == nil {
				id.Presented = mcp.Secret(cred)
			}
			next.ServeHTTP(w, r.WithContext(mcp.WithIdentity(r.Context(), id)))
		})
	}
}

// CheckLoopback returns nil if addr (host:port, as given to net.Listen)
// can only be reached from this machine: localhost, 127.0.0.0/8 or ::1.
// An empty host (":8080") and the unspecified addresses (0.0.0.0, ::)
// listen on every interface and are refused; so is any other name, which
// could resolve anywhere.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("auth: listen address %q: %w", addr, err)
	}
	if loopback.Host(host) {
		return nil
	}
	return fmt.Errorf("%w: %q", ErrNotLoopback, addr)
}
