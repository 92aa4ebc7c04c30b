// personal.go wires each person's own credentials (package personal) into
// the gateway: per_user backends find them there, the CLI and the console
// store them, and a principal's revocation ends their upstream sessions.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/auth/personal"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway/admin"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
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
	if !g.cfg.Auth.Disabled { // the console serves the page where people store theirs
		bo.CredentialsPage = func() string { return g.origin() + personalPage }
	}
	if g.tokens != nil || g.authServer != nil {
		tokens, grants := g.tokens, g.authServer
		bo.Revoked = func(principal string) <-chan struct{} {
			// A service token's holder is revoked with their token (a
			// grant they made with it is but one credential of theirs); a
			// person signed in upstream, with a grant of theirs.
			id, isToken := auth.PrincipalToken(principal)
			switch {
			case isToken && tokens != nil:
				return tokens.Revoked(id)
			case !isToken && grants != nil:
				return grants.Revoked(principal)
			}
			return nil
		}
	}
	return nil
}

// Credentials is the people's credentials for per_user backends (nil when
// vault names no key).
func (g *Gateway) Credentials() *personal.Credentials { return g.personal }

// ErrNoVaultBackend is why a credential is refused for a backend that
// takes no stored one (not per_user, or of exchange).
var ErrNoVaultBackend = errors.New("no backend of that name takes a stored credential (identity: per_user, credential: vault)")

// VaultBackend checks that cfg has a backend called name that takes each
// person's stored credential.
func VaultBackend(cfg *config.Config, name string) error {
	var names []string
	for _, b := range cfg.Backends {
		if b.Identity.PerUser() && b.Credential != nil && b.Credential.Vault != nil {
			if b.Name == name {
				return nil
			}
			names = append(names, b.Name)
		}
	}
	if len(names) == 0 {
		return ErrNoVaultBackend
	}
	return errors.Join(ErrNoVaultBackend, errors.New("those that do: "+strings.Join(names, ", ")))
}

// PersonalWay is how backend name of cfg gets each person's own
// credential: upstream.WayVault, WayExchange or WayOAuth ("": it is not a
// per_user backend of cfg).
func PersonalWay(cfg *config.Config, name string) string {
	for _, b := range cfg.Backends {
		switch c := b.Credential; {
		case b.Name != name || !b.Identity.PerUser() || c == nil:
		case c.Vault != nil:
			return upstream.WayVault
		case c.Exchange != nil:
			return upstream.WayExchange
		case c.OAuth != nil:
			return upstream.WayOAuth
		}
	}
	return ""
}

// ForgetAuthorization drops principal's own authorization of backend (a
// per_user backend of oauth of cfg), kept in st. Its refresh token is
// revoked at the authorization server first: the error says why not, and
// it is dropped anyway. Their next call, on every replica, has none. had
// says whether there was a token.
func ForgetAuthorization(ctx context.Context, cfg *config.Config, st store.Store, backend, principal string) (had bool, err error) {
	var url string
	for _, b := range cfg.Backends {
		if b.Name == backend {
			url = b.URL
		}
	}
	if PersonalWay(cfg, backend) != upstream.WayOAuth {
		return false, errors.New("no backend of that name is one each person authorizes (identity: per_user, credential: oauth)")
	}
	bo := &backendOAuth{byPeople: map[string]*oauthclient.People{}}
	if err := bo.keepPeople(cfg, st); err != nil {
		return false, err
	}
	bo.env = &oauthclient.ClientEnv{RedirectURL: func() string { return "" }, Outbound: outbound(cfg.Outbound)}
	return bo.people(backend, url, nil, nil, "").Forget(ctx, principal)
}

// MyCredentials is, for each per_user backend of vault, whether principal
// stored a credential, and for each of oauth, how their authorization
// stands ("" lists the backends alone).
func (s *adminSource) MyCredentials(ctx context.Context, principal string) ([]admin.CredentialRow, error) {
	if s.g.personal == nil {
		return nil, nil
	}
	var rows []admin.CredentialRow
	for _, st := range s.g.backends.States() {
		b := s.g.backends.Backend(st.Name)
		if b == nil {
			continue
		}
		if people := b.People(); people != nil {
			row := admin.CredentialRow{Backend: st.Name, Authorize: true, SentAs: "your own token, from its authorization server"}
			if principal != "" {
				a := people.Status(ctx, principal)
				row.Authorization = admin.PersonAuthorization{Authorized: a.Authorized, Issuer: a.Issuer, Scope: a.Scope, Expiry: a.Expiry,
					Waiting: a.Link != "", Failure: a.Failure}
			}
			rows = append(rows, row)
			continue
		}
		header, env, ok := b.Vault()
		if !ok {
			continue
		}
		row := admin.CredentialRow{Backend: st.Name, SentAs: "the header " + header}
		if header == "" {
			row.SentAs = "the variable " + env + " of a process of your own"
		}
		rows = append(rows, row)
	}
	if principal == "" || len(rows) == 0 {
		return rows, nil
	}
	stored, err := s.g.personal.List(ctx, principal)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		for _, c := range stored {
			if c.Backend == rows[i].Backend {
				rows[i].Stored, rows[i].UpdatedAt = true, c.UpdatedAt
			}
		}
	}
	return rows, nil
}

func (s *adminSource) SetMyCredential(ctx context.Context, by mcp.Identity, backend, value string) error {
	return s.auditCredential(by, backend, "store", func() error { return s.g.personal.Set(ctx, by.Budget(), backend, value) })
}

func (s *adminSource) DeleteMyCredential(ctx context.Context, by mcp.Identity, backend string) error {
	return s.auditCredential(by, backend, "delete", func() error { return s.g.personal.Delete(ctx, by.Budget(), backend) })
}

// people is backend's People, for a person's own authorization.
func (s *adminSource) people(backend string) (*oauthclient.People, error) {
	if b := s.g.backends.Backend(backend); b != nil && b.People() != nil {
		return b.People(), nil
	}
	return nil, errors.New("no backend called " + backend + " is one each person authorizes")
}

func (s *adminSource) AuthorizeMine(ctx context.Context, by mcp.Identity, backend string) (link string, err error) {
	people, err := s.people(backend)
	if err != nil {
		return "", err
	}
	err = s.auditCredential(by, backend, "authorize", func() error {
		link, err = people.Link(ctx, by.Budget())
		return err
	})
	return link, err
}

func (s *adminSource) ForgetMine(ctx context.Context, by mcp.Identity, backend string) (had bool, err error) {
	people, err := s.people(backend)
	if err != nil {
		return false, err
	}
	err = s.auditCredential(by, backend, "revoke", func() error {
		had, err = people.Forget(ctx, by.Budget())
		return err
	})
	return had, err
}

// auditCredential runs change (what, of by's credential for backend) and
// audits it, never the value.
func (s *adminSource) auditCredential(by mcp.Identity, backend, what string, change func() error) error {
	if s.g.personal == nil {
		return ErrNoVaultBackend
	}
	start := time.Now()
	err := change()
	if s.g.audit != nil {
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		_ = s.g.audit.Record(store.AuditRecord{Time: start.UTC(), Subject: by.Subject, TokenID: by.TokenID, Role: by.Role,
			Kind: "credential", Name: what, Backend: backend, Outcome: outcome, Duration: time.Since(start)})
	}
	return err
}

// arrivingMethods are the requests with which a person may be the first
// to reach a per_user backend of exchange or oauth: listing, or starting.
var arrivingMethods = map[string]bool{"tools/list": true, "prompts/list": true, "resources/list": true,
	"initialize": true, "server/discover": true}

// personArrives is the engine middleware that lets a person who lists
// open a per_user backend of exchange or oauth that is down. A server that
// lets no one in without a person's token is listed with theirs
// (backends.Backend.Arrive, in the background: the list does not wait).
// It costs a map lookup on other requests.
func (g *Gateway) personArrives(next mcp.Handler) mcp.Handler {
	return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
		if arrivingMethods[r.Method] {
			if id, ok := mcp.IdentityFrom(ctx); ok {
				g.backends.Arrive(id)
			}
		}
		return next.ServeMCP(ctx, r)
	})
}
