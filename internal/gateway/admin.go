// admin.go is what the admin console (package admin) reads and changes,
// taken from the gateway's parts: the backends and their metrics, the
// engine's catalogue and sessions, the store's audit log, the tokens.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/auth/authserver"
	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/auth/seal"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/gateway/admin"
	"github.com/mcpgate/mcpgate/internal/observe/metrics"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/mcp"
)

// adminSource is the gateway as the console sees it.
type adminSource struct {
	g     *Gateway
	authn *auth.Authenticator
	store store.Store
}

// newAdmin builds the console, or returns nil when there is nothing to
// log in with (authentication off: the console is not served).
func (g *Gateway) newAdmin(authn *auth.Authenticator, st store.Store) (*admin.Handler, error) {
	if authn == nil {
		return nil, nil
	}
	var key []byte
	if k, _, err := g.cfg.Sessions.SessionKeys(); err == nil && k != nil {
		// Replicas with one session key share console sessions; the
		// cookie's key is derived, never the session key itself.
		key = seal.Derive(k, "mcpgate admin console cookie")
	}
	h, err := admin.New(admin.Options{Source: &adminSource{g: g, authn: authn, store: st}, Key: key, Logger: g.log,
		Secure: strings.HasPrefix(publicOrigin(g.cfg), "https://")})
	if err != nil {
		return nil, err
	}
	g.console = h
	return h, nil
}

// AuthorizationLink is backend name's link waiting for an admin.
func (s *adminSource) AuthorizationLink(ctx context.Context, name string) string {
	if b := s.g.backends.Backend(name); b != nil && b.Authorization() != nil {
		return b.Authorization().Status(ctx).Link
	}
	return ""
}

func (s *adminSource) Authenticate(ctx context.Context, secret string) (mcp.Identity, time.Time, error) {
	return s.authn.Check(ctx, secret, time.Now())
}

func (s *adminSource) Active(ctx context.Context, id mcp.Identity) bool {
	if strings.HasPrefix(id.TokenID, authserver.GrantPrefix) {
		return s.g.grantActive(ctx, id, time.Now()) // its grant, and the service token behind it
	}
	if !strings.HasPrefix(id.TokenID, auth.TokenIDPrefix) || s.g.tokens == nil {
		return true // a JWT of another issuer: its session ends with its exp
	}
	now := time.Now()
	for _, t := range s.g.tokens.List() {
		if t.ID == id.TokenID {
			return t.Active(now) && t.Role == id.Role
		}
	}
	return false
}

func (s *adminSource) IsAdmin(role string) bool { return s.g.roles.Allows(role, policy.Admin) }

func (s *adminSource) EndSession(ctx context.Context, id string, until time.Time) error {
	if s.store == nil {
		return nil
	}
	return s.store.EndConsoleSession(ctx, id, until, time.Now())
}

func (s *adminSource) SessionEnded(ctx context.Context, id string) bool {
	if s.store == nil {
		return false
	}
	ended, err := s.store.ConsoleSessionEnded(ctx, id)
	if err != nil {
		s.g.log.Warn("admin: a console session could not be looked up; it is taken as ended", "err", err)
		return true
	}
	return ended
}

func (s *adminSource) Backends(ctx context.Context) []admin.BackendRow {
	// The catalogue as an admin sees it: every entry, counted by owner.
	entries := map[string]int{}
	for _, e := range s.g.server.Catalogue(mcp.WithIdentity(ctx, mcp.Identity{Subject: "admin console", Role: policy.Admin})) {
		entries[e.Owner]++
	}
	calls := s.g.metrics.BackendCallStats()
	var out []admin.BackendRow
	for _, st := range s.g.backends.States() {
		c := calls[st.Name]
		row := admin.BackendRow{Name: st.Name, Kind: st.Kind, Up: st.Up, Connecting: st.Connecting, Since: st.Since, Restarts: st.Restarts,
			LastError: st.LastError, Entries: entries[st.Name], Calls: c.Calls, Errors: c.Errors,
			Mean: time.Duration(c.MeanSeconds * float64(time.Second))}
		if b := s.g.backends.Backend(st.Name); b != nil && b.Authorization() != nil {
			st := b.Authorization().Status(ctx)
			row.OAuth, row.AuthorizeLink = oauthSummary(st)
			if row.AuthorizeLink != "" {
				// The console's route, which binds the authorization to
				// this admin's browser (admin/authorize.go).
				row.AuthorizeLink = "/admin/backends/authorize?name=" + url.QueryEscape(row.Name)
			}
			row.Authorized = st.Authorized
		}
		out = append(out, row)
	}
	return out
}

func (s *adminSource) RestartBackend(name string) error { return s.g.backends.Restart(name) }

// ForgetBackendAuthorization drops backend name's OAuth authorization
// for by (oauthclient.Authorization.Forget) and restarts the backend, so that
// its refusal asks for a new one at once; audited as oauth
// "forget-backend". The answer says what was done.
func (s *adminSource) ForgetBackendAuthorization(ctx context.Context, name string, by mcp.Identity) (string, error) {
	start := time.Now()
	b := s.g.backends.Backend(name)
	if b == nil || b.Authorization() == nil {
		return "", fmt.Errorf("backend %s has no OAuth authorization of the gateway's", name)
	}
	had, revokeErr := b.Authorization().Forget(ctx)
	if revokeErr != nil && !errors.Is(revokeErr, context.Canceled) && had {
		s.g.log.Warn("backend authorization forgotten, but its revocation failed", "backend", name, "err", revokeErr)
	}
	if s.g.audit != nil {
		_ = s.g.audit.Record(store.AuditRecord{Time: start.UTC(), Subject: by.Subject, TokenID: by.TokenID, Role: by.Role,
			Kind: "oauth", Name: "forget-backend", Backend: name, Outcome: "ok", Duration: time.Since(start)})
	}
	_ = s.g.backends.Restart(name)
	switch {
	case !had:
		return "Backend " + name + " held no token; any link waiting is withdrawn.", nil
	case revokeErr != nil:
		return "Forgot " + name + "'s tokens; its authorization server did not revoke them (" + revokeErr.Error() + ").", nil
	}
	return "Forgot " + name + "'s tokens, revoked at its authorization server; it asks for a new authorization.", nil
}

func (s *adminSource) Roles() []string { return s.g.roles.Names() }

func (s *adminSource) Catalogue(ctx context.Context, role string) []mcp.CatalogueEntry {
	return s.g.server.Catalogue(mcp.WithIdentity(ctx, mcp.Identity{Subject: "admin console", Role: role}))
}

func (s *adminSource) Sessions() []mcp.SessionInfo { return s.g.server.SessionList() }

func (s *adminSource) TryTool(ctx context.Context, by mcp.Identity, params json.RawMessage) (json.RawMessage, error) {
	return s.g.server.Call(mcp.WithIdentity(ctx, by), "tools/call", params)
}

func (s *adminSource) OwnDefinition(ctx context.Context, backend, kind, name string) json.RawMessage {
	if s.store == nil || backend == "" {
		return nil
	}
	pin, err := s.store.PinOf(ctx, backend, kind, name)
	if err != nil {
		return nil
	}
	return pin.Definition
}

func (s *adminSource) Changes(ctx context.Context) ([]store.Pin, error) {
	if s.store == nil {
		return nil, nil
	}
	return s.store.PendingPins(ctx)
}

func (s *adminSource) DecideChange(ctx context.Context, backend, kind, name, fingerprint string, approve bool, by mcp.Identity) error {
	if s.store == nil {
		return store.ErrNotFound
	}
	return s.g.pins.decide(ctx, s.store, backend, kind, name, fingerprint, approve, by)
}

func (s *adminSource) Audit(ctx context.Context, q store.AuditQuery) (store.AuditPage, error) {
	if s.store == nil {
		return store.AuditPage{}, errors.New("no store")
	}
	return s.store.QueryAudit(ctx, q)
}

func (s *adminSource) History(now time.Time, r metrics.Range) metrics.History {
	s.g.metrics.Sample(now, s.g.backendStates())
	return s.g.metrics.History(now, r)
}

// Fleet: replicas share their state in Redis or PostgreSQL, and either
// means this console shows one of several.
func (s *adminSource) Fleet() admin.Fleet {
	replicas := s.g.cluster != nil || config.StoreIsPostgres(s.g.cfg.Store)
	name, _ := os.Hostname()
	return admin.Fleet{Replicas: replicas, Replica: name, Dashboard: s.g.cfg.Metrics.DashboardURL}
}

func (s *adminSource) Tokens(context.Context) []store.Token { return s.g.tokens.List() }

func (s *adminSource) CreateToken(ctx context.Context, name, role string, expires time.Time) (string, store.Token, error) {
	return s.g.tokens.Create(ctx, name, role, expires)
}

func (s *adminSource) Grants(ctx context.Context) ([]store.OAuthGrant, bool) {
	if s.g.authServer == nil {
		return nil, false
	}
	grants, err := s.g.authServer.Grants(ctx)
	if err != nil {
		s.g.log.Error("admin: oauth grants", "err", err)
	}
	return grants, true
}

func (s *adminSource) RevokeGrant(ctx context.Context, id string, by mcp.Identity) error {
	if s.g.authServer == nil {
		return store.ErrNotFound
	}
	return s.g.authServer.RevokeGrant(ctx, id, by)
}

func (s *adminSource) RevokeToken(ctx context.Context, id string) error {
	return s.g.tokens.Revoke(ctx, id)
}

// oauthSummary is a backend's authorization in a line, and the link an
// admin is asked to open.
func oauthSummary(st oauthclient.AuthorizationStatus) (string, string) {
	switch {
	case st.Link != "":
		return "OAuth: waiting for an admin to authorize the gateway (the link is good until " + st.Expires.UTC().Format("15:04 UTC") + ").", st.Link
	case st.Failure != "":
		return "OAuth: " + st.Failure, ""
	case st.Authorized:
		s := "OAuth: authorized at " + egress.Summary(st.Issuer)
		if st.Scope != "" {
			s += " for " + st.Scope
		}
		if st.DPoP {
			s += ", the token bound to the gateway's key (DPoP)"
		}
		return s + ".", ""
	}
	return "", ""
}
