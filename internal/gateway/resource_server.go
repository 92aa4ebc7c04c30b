// resource_server.go makes the gateway an OAuth 2.1 protected resource when
// auth.oauth is set. The access tokens of the authorization servers it
// lists are accepted beside service tokens (package auth). The Protected
// Resource Metadata (RFC 9728) tells a client where to get one. It is
// served at the root well-known URL and at the one suffixed with the MCP
// endpoint's path, as the MCP specification has clients try them.

package gateway

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/auth/authserver"
	"github.com/mcpgate/mcpgate/internal/auth/seal"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/internal/store"
)

// prmPath is the well-known path of Protected Resource Metadata.
const prmPath = "/.well-known/oauth-protected-resource"

// oauthVerifier is the verifier of auth.oauth (nil when it is not set)
// and the URL of the gateway's resource metadata.
func (g *Gateway) oauthVerifier(ctx context.Context, st store.Store) (*auth.OAuthVerifier, string, error) {
	o := g.cfg.Auth.OAuth
	if o == nil {
		return nil, "", nil
	}
	scopes := o.Scopes
	if o.Builtin && len(scopes) == 0 {
		// With no mapping, each role is a scope of its name.
		scopes = map[string]string{}
		for _, r := range g.roles.Names() {
			scopes[r] = r
		}
	}
	cfg := auth.OAuthConfig{Resource: o.Resource, Scopes: scopes, Level: g.roles.Level, Leeway: o.Leeway.Duration, Outbound: outbound(g.cfg.Outbound)}
	if o.Builtin {
		as, err := g.builtinAuthServer(scopes, st)
		if err != nil {
			return nil, "", fmt.Errorf("auth.oauth.builtin: %w", err)
		}
		g.authServer, cfg.Local = as, as
		g.announceGrants()
	}
	for _, s := range o.AuthorizationServers {
		cfg.Issuers = append(cfg.Issuers, auth.OAuthIssuer{Issuer: s.Issuer, Algorithm: s.Algorithm, JWKSURL: s.JWKSURL, RoleClaim: s.RoleClaim})
	}
	v, err := auth.NewOAuthVerifier(ctx, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("auth.oauth: %w", err)
	}
	u, _ := url.Parse(o.Resource) // checked by config and by NewOAuthVerifier
	return v, u.Scheme + "://" + u.Host + prmPath + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// builtinAuthServer is the built-in authorization server, at the
// resource's origin, over the gateway's store and service tokens.
func (g *Gateway) builtinAuthServer(scopes map[string]string, st store.Store) (*authserver.Server, error) {
	o := g.cfg.Auth.OAuth
	u, _ := url.Parse(o.Resource)
	key := make([]byte, 32)
	if k, _, err := g.cfg.Sessions.SessionKeys(); err == nil && k != nil {
		// Replicas with one session key check each other's access tokens;
		// the signing key is derived, never the session key itself.
		key = seal.Derive(k, "mcpgate oauth access tokens")
	} else {
		// One replica: a key of this process's. Access tokens are short;
		// after a restart, clients refresh (grants are in the store).
		_, _ = rand.Read(key)
		if config.StoreIsPostgres(g.cfg.Store) {
			g.log.Warn("auth.oauth.builtin on a shared PostgreSQL store without a session key: the access tokens this replica issues are refused by the others; set sessions.key_file (or " + config.SessionKeyEnv + ") alike on every replica")
		}
	}
	up, err := g.upstream()
	if err != nil {
		return nil, err
	}
	return authserver.New(authserver.Config{
		Issuer: u.Scheme + "://" + u.Host, Resource: o.Resource, Store: st, Tokens: g.tokens,
		Scopes: scopes, Level: g.roles.Level, Key: key, Upstream: up,
		AccessLifetime: o.AccessLifetime.Duration, RefreshLifetime: o.RefreshLifetime.Duration, ClientLimit: o.MaxClients, GrantLimit: o.MaxGrants, GrantLifetime: o.GrantLifetime.Duration, UpstreamRecheck: upstreamRecheck(o),
		Audit: func(r store.AuditRecord) {
			if g.audit != nil {
				_ = g.audit.Record(r)
			}
		},
		Logger:   g.log,
		Outbound: outbound(g.cfg.Outbound),
	})
}

// mountResourceMetadata serves the metadata at both well-known URLs,
// without a credential (a client reads it to learn how to get one).
func (g *Gateway) mountResourceMetadata(root *http.ServeMux) {
	if g.oauth == nil {
		return
	}
	body, _ := json.Marshal(struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		ScopesSupported        []string `json:"scopes_supported,omitempty"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name"`
	}{g.oauth.Resource(), g.oauth.Issuers(), g.oauth.ScopesSupported(), []string{"header"}, "mcpgate"})
	serve := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(body)
	}
	root.HandleFunc("GET "+prmPath, serve)
	if g.authServer != nil {
		g.authServer.Mount(root)
	}
	u, _ := url.Parse(g.oauth.Resource())
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		root.HandleFunc("GET "+prmPath+p, serve)
	}
}

// upstream is the built-in server's OpenID Connect provider (nil: none),
// its secret read from the environment or a file, and a person's role
// from their ID token's claim: the highest of its values' roles.
func (g *Gateway) upstream() (*authserver.Provider, error) {
	c := g.cfg.Auth.OAuth.Upstream
	if c == nil {
		return nil, nil
	}
	var src sources
	up := &authserver.Provider{Issuer: c.Issuer, ClientID: c.ClientID, Scopes: c.Scopes, SubjectClaim: c.SubjectClaim,
		Algorithm: c.Algorithm, Name: c.Name, Outbound: outbound(g.cfg.Outbound)}
	switch {
	case c.ClientSecretFrom != "":
		up.ClientSecret, _ = src.env("auth.oauth.upstream.client_secret_from", c.ClientSecretFrom)
	case c.ClientSecretFile != "":
		up.ClientSecret, _ = src.file("auth.oauth.upstream.client_secret_file", c.ClientSecretFile)
	}
	if err := src.err(); err != nil {
		return nil, err
	}
	claim := cmp.Or(c.RoleClaim, "role")
	up.Role = func(claims map[string]any) (string, bool) {
		var values []string
		switch v := claims[claim].(type) {
		case string:
			values = []string{v}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					values = append(values, s)
				}
			}
		}
		var roles []string
		for _, v := range values {
			role, ok := c.Roles[v]
			if !ok && len(c.Roles) == 0 {
				role, ok = v, true
			}
			if ok {
				roles = append(roles, role)
			}
		}
		best := policy.Highest(g.roles.Level, roles...)
		if best == "" && c.DefaultRole != "" {
			return c.DefaultRole, true
		}
		return best, best != ""
	}
	return up, nil
}

// upstreamRecheck is auth.oauth.upstream.recheck (0: the default).
func upstreamRecheck(o *config.OAuth) time.Duration {
	if o.Upstream == nil {
		return 0
	}
	return o.Upstream.Recheck.Duration
}
