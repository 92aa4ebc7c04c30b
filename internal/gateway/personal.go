// personal.go wires each person's own credentials (package personal) into
// the gateway: per_user backends find them there, the CLI and the console
// store them, and a principal's revocation ends their upstream sessions.

package gateway

import (
	"errors"
	"strings"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/auth/personal"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/store"
)

// OpenCredentials is the people's credentials kept in st, sealed under
// the key cfg's vault names; nil with no key (no per_user backend can then
// be configured, so none is needed).
func OpenCredentials(cfg *config.Config, st store.PersonalCredentialStore) (*personal.Credentials, error) {
	key, err := cfg.Vault.Key("vault")
	if err != nil || key == nil || st == nil {
		return nil, err
	}
	return personal.New(st, key)
}

// personalOptions gives the backends the people's credentials, the page
// where a person stores theirs, and a service token's revocation.
func (g *Gateway) personalOptions(bo *backends.Options, st store.Store) error {
	if st == nil {
		return nil
	}
	c, err := OpenCredentials(g.cfg, st)
	if err != nil || c == nil {
		return err
	}
	g.personal = c
	bo.Credentials = c
	if g.tokens != nil {
		tokens := g.tokens
		bo.Revoked = func(principal string) <-chan struct{} {
			if id, ok := auth.PrincipalToken(principal); ok {
				return tokens.Revoked(id)
			}
			return nil
		}
	}
	return nil
}

// Credentials is the people's credentials for per_user backends (nil when
// vault names no key).
func (g *Gateway) Credentials() *personal.Credentials { return g.personal }

// ErrNoSuchPerUserBackend is why a credential is refused for a backend
// that is not configured per_user.
var ErrNoSuchPerUserBackend = errors.New("no per_user backend of that name")

// PerUserBackend checks that cfg has a per_user backend called name.
func PerUserBackend(cfg *config.Config, name string) error {
	for _, b := range cfg.Backends {
		if b.Name == name && b.Identity.PerUser() {
			return nil
		}
	}
	var names []string
	for _, b := range cfg.Backends {
		if b.Identity.PerUser() {
			names = append(names, b.Name)
		}
	}
	if len(names) == 0 {
		return ErrNoSuchPerUserBackend
	}
	return errors.Join(ErrNoSuchPerUserBackend, errors.New("per_user backends: "+strings.Join(names, ", ")))
}
