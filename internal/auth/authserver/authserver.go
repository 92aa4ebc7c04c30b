// Package authserver is mcpgate's built-in OAuth 2.1 authorization server,
// for teams without an identity provider of their own. An MCP client that
// only speaks OAuth discovers it from the gateway's protected resource
// metadata. It registers (a Client ID Metadata Document, or Dynamic Client
// Registration, RFC 7591) and sends a person to its sign-in page. It then
// gets access tokens it refreshes itself.
//
// What it grants is bounded by what the person proves: they sign in with a
// service token an admin gave them, and the role a client gets is the lower
// of the one it asked for and the token's. Revoking that token ends every
// grant made with it.
//
// Only the authorization code flow with PKCE (S256) is served, for public
// clients. Codes live a minute and redeem once; a second redemption revokes
// the grant the first made. Refresh tokens rotate on every use, and the one
// a rotation replaced, presented again, revokes the grant. Access tokens
// are short JWTs (HS256 under a key only the gateway holds), bound to the
// gateway's resource URI. They are checked against their grant on use. A
// revocation so holds at once on the replica that made it, and within
// grantCacheFor on the others.
//
// The library question: zitadel/oidc's provider has no resource
// indicators (RFC 8707) and fosite brings a storage model of its own;
// neither reads Client ID Metadata Documents. This is a small server on
// golang-jwt and the store, with every rule in one place.
package authserver

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/mcp"
)

// Paths the server answers on, under the issuer.
const (
	MetadataPath  = "/.well-known/oauth-authorization-server"
	AuthorizePath = "/oauth/authorize"
	TokenPath     = "/oauth/token"
	RegisterPath  = "/oauth/register"
	RevokePath    = "/oauth/revoke"
)

// Defaults of Config's lifetimes and limits.
const (
	DefaultAccessLifetime  = 10 * time.Minute
	DefaultRefreshLifetime = 30 * 24 * time.Hour
	DefaultCodeLifetime    = time.Minute
	DefaultClientLimit     = 1000
	DefaultClientIdle      = 24 * time.Hour
	DefaultGrantLimit      = 20
	DefaultGrantLifetime   = 30 * 24 * time.Hour
	DefaultUpstreamRecheck = 24 * time.Hour
	// grantCacheFor is how long an access token's grant, once found
	// active, is taken as active without asking the store again.
	grantCacheFor = 5 * time.Second
)

// Config is what the server needs.
type Config struct {
	// Issuer is its issuer identifier: the gateway's origin
	// (scheme://host[:port]), under which its endpoints are served.
	Issuer string
	// Resource is the gateway's canonical resource URI; every token is
	// bound to it.
	Resource string
	Store    store.OAuthStore
	// Tokens are the service tokens a person signs in with.
	Tokens *auth.Tokens
	// Scopes maps each scope to the role it grants; Level ranks roles.
	Scopes map[string]string
	Level  func(role string) (int, bool)
	// Key signs access tokens: at least 32 bytes.
	Key []byte

	AccessLifetime, RefreshLifetime, CodeLifetime time.Duration
	// ClientLimit bounds the clients Dynamic Client Registration may
	// store; RegisterRate bounds registrations per second (burst 10).
	ClientLimit  int
	RegisterRate rate.Limit
	// GrantLifetime bounds a grant from consent (default 30 days): its
	// refresh tokens slide forward at each refresh, and without it a
	// grant never made its person sign in again.
	GrantLifetime time.Duration
	// UpstreamRecheck bounds a grant made through the upstream provider
	// (default 24 h). The gateway keeps none of the provider's tokens. The
	// person so signs in at the provider again at least this often, which asks
	// it whether they still may.
	UpstreamRecheck time.Duration
	// GrantLimit bounds the live grants of one person (the service token
	// they proved themselves with, or their upstream subject): default 20.
	GrantLimit int
	// RegisterPerSource bounds the registrations of one source address
	// (burst 10; default one a minute).
	RegisterPerSource rate.Limit
	// ClientIdle is how long a registered client that never completed a
	// sign-in is kept (default 24h): registration cannot be used up for
	// good.
	ClientIdle time.Duration
	// HTTPClient fetches Client ID Metadata Documents; nil: one under
	// Outbound. A client_id is anybody's to choose: it must not make the
	// gateway reach inside its own network, follow a redirect, or read
	// without end.
	HTTPClient *http.Client
	// Outbound is the policy of those fetches (nil: the default, public
	// addresses only).
	Outbound *egress.Policy
	// Audit records what the server did (kind "oauth"); nil: nothing.
	Audit func(store.AuditRecord)
	// Upstream, when set, is an OpenID Connect provider people may sign
	// in with instead of a service token (upstream.go).
	Upstream *Provider
	// Now is the clock; nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Server is the authorization server. It is safe for concurrent use.
type Server struct {
	cfg       Config
	log       *slog.Logger
	register  *rate.Limiter
	sources   sourceLimits
	pruned    atomic.Int64      // when the store was last pruned (unix nanoseconds)
	byRole    map[string]string // role → the scope that grants it
	supported []string
	up        *upstream // nil: no upstream sign-in
	documents documentCache

	mu     sync.Mutex
	active map[string]time.Time // grant id → until when it is taken as active
	// revoked are the channels Revoked gave, by principal; announce is
	// told of each revocation here (Announce).
	revoked  map[string]chan struct{}
	announce func(principal string)
}

// New checks cfg.
func New(cfg Config) (*Server, error) {
	u, err := url.Parse(cfg.Issuer)
	if err != nil || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("authserver: issuer %q must be an origin, scheme://host[:port]", cfg.Issuer)
	}
	switch {
	case cfg.Store == nil || cfg.Tokens == nil || cfg.Level == nil:
		return nil, errors.New("authserver: a store, service tokens and a role ranking are required")
	case len(cfg.Key) < 32:
		return nil, errors.New("authserver: the signing key must have at least 32 bytes")
	case len(cfg.Scopes) == 0:
		return nil, errors.New("authserver: no scope grants a role")
	case cfg.AccessLifetime < 0 || cfg.RefreshLifetime < 0 || cfg.CodeLifetime < 0 || cfg.ClientLimit < 0:
		return nil, errors.New("authserver: lifetimes and the client limit must not be negative")
	}
	cfg.AccessLifetime = cmp.Or(cfg.AccessLifetime, DefaultAccessLifetime)
	cfg.RefreshLifetime = cmp.Or(cfg.RefreshLifetime, DefaultRefreshLifetime)
	cfg.CodeLifetime = cmp.Or(cfg.CodeLifetime, DefaultCodeLifetime)
	cfg.ClientLimit = cmp.Or(cfg.ClientLimit, DefaultClientLimit)
	cfg.RegisterRate = cmp.Or(cfg.RegisterRate, 1)
	cfg.RegisterPerSource = cmp.Or(cfg.RegisterPerSource, rate.Every(defaultPerSourceGap))
	cfg.ClientIdle = cmp.Or(cfg.ClientIdle, DefaultClientIdle)
	cfg.GrantLimit = cmp.Or(cfg.GrantLimit, DefaultGrantLimit)
	cfg.GrantLifetime = cmp.Or(cfg.GrantLifetime, DefaultGrantLifetime)
	cfg.UpstreamRecheck = cmp.Or(cfg.UpstreamRecheck, DefaultUpstreamRecheck)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = cfg.Outbound.Client()
	}
	s := &Server{cfg: cfg, log: cfg.Logger, register: rate.NewLimiter(cfg.RegisterRate, 10), sources: sourceLimits{every: cfg.RegisterPerSource},
		byRole: map[string]string{}, active: map[string]time.Time{}}
	for scope, role := range cfg.Scopes {
		if _, ok := cfg.Level(role); !ok {
			return nil, fmt.Errorf("authserver: scope %q grants %q, which is not a role", scope, role)
		}
		if prev, ok := s.byRole[role]; !ok || scope < prev {
			s.byRole[role] = scope
		}
		s.supported = append(s.supported, scope)
	}
	slices.Sort(s.supported)
	if s.up, err = newUpstream(cfg.Upstream); err != nil {
		return nil, err
	}
	return s, nil
}

// Issuer is the server's issuer identifier.
func (s *Server) Issuer() string { return s.cfg.Issuer }

// Mount serves the metadata and the endpoints on mux.
func (s *Server) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET "+MetadataPath, s.serveMetadata)
	mux.HandleFunc("GET "+AuthorizePath, s.serveAuthorize)
	mux.HandleFunc("POST "+AuthorizePath, s.serveConsent)
	mux.HandleFunc("POST "+TokenPath, s.serveToken)
	mux.HandleFunc("POST "+RegisterPath, s.serveRegister)
	mux.HandleFunc("POST "+RevokePath, s.serveRevoke)
	mux.HandleFunc("GET "+UpstreamPath, s.serveUpstream)
	mux.HandleFunc("GET "+UpstreamCallbackPath, s.serveUpstreamCallback)
}

// serveMetadata is RFC 8414's document.
func (s *Server) serveMetadata(w http.ResponseWriter, _ *http.Request) {
	is := s.cfg.Issuer
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         is,
		"authorization_endpoint":                         is + AuthorizePath,
		"token_endpoint":                                 is + TokenPath,
		"registration_endpoint":                          is + RegisterPath,
		"revocation_endpoint":                            is + RevokePath,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"revocation_endpoint_auth_methods_supported":     []string{"none"},
		"scopes_supported":                               s.supported,
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// secret is a fresh random value, URL-safe, with prefix.
func secret(prefix string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// roleFor is the role a person proving cred's role gets for the scopes
// asked: the highest any asked scope grants, never above cred's; with no
// scope asked (or none known), cred's own. ok is false when the person's
// role is not one any scope grants here.
func (s *Server) roleFor(asked []string, cred string) (role, scope string, ok bool) {
	credLevel, known := s.cfg.Level(cred)
	if !known {
		return "", "", false
	}
	var granted []string
	for _, sc := range asked {
		if r, ok := s.cfg.Scopes[sc]; ok {
			granted = append(granted, r)
		}
	}
	best := policy.Highest(s.cfg.Level, granted...)
	if bestLevel, _ := s.cfg.Level(best); best == "" || bestLevel > credLevel {
		best = cred
	}
	scope, ok = s.byRole[best]
	if !ok {
		// No scope grants exactly this role: the highest one that grants
		// less, so that the token's scope never says more than it grants.
		best, scope = "", ""
		bestLevel := 0
		for r, sc := range s.byRole {
			if n, _ := s.cfg.Level(r); n <= credLevel && n > bestLevel {
				best, scope, bestLevel = r, sc, n
			}
		}
		if best == "" {
			return "", "", false
		}
	}
	return best, scope, true
}

// accessClaims are an access token's: RFC 9068's, and the grant.
type accessClaims struct {
	jwt.RegisteredClaims
	Scope    string `json:"scope"`
	ClientID string `json:"client_id"`
	Grant    string `json:"gid"`
	Role     string `json:"role"`
	Token    string `json:"tid,omitempty"`
}

// issueAccess signs an access token for g, valid from now.
func (s *Server) issueAccess(g store.OAuthGrant, now time.Time) (string, error) {
	c := accessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: s.cfg.Issuer, Subject: g.Subject, Audience: jwt.ClaimStrings{g.Resource},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(s.cfg.AccessLifetime)),
			ID: secret(""),
		},
		Scope: g.Scope, ClientID: g.ClientID, Grant: g.ID, Role: g.Role, Token: g.TokenID,
	}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	t.Header["typ"] = "at+jwt"
	return t.SignedString(s.cfg.Key)
}

// Ways an access token of this server is refused.
var (
	ErrGrantRevoked = errors.New("authserver: the token's grant is revoked")
)

// Verify checks an access token this server issued at now: signature,
// issuer, audience (the resource), expiry, and that its grant and the
// service token behind it are still active. It returns the caller's
// identity and when the token expires.
func (s *Server) Verify(ctx context.Context, token string, now time.Time) (mcp.Identity, time.Time, error) {
	var c accessClaims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.cfg.Key, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer(s.cfg.Issuer), jwt.WithAudience(s.cfg.Resource),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(func() time.Time { return now }))
	if err != nil {
		return mcp.Identity{}, time.Time{}, fmt.Errorf("authserver: access token: %w", err)
	}
	if err := s.grantActive(ctx, c.Grant, c.Token, now); err != nil {
		return mcp.Identity{}, time.Time{}, err
	}
	// The grant is the credential; its principal is the service token it
	// was proven with, or the person an upstream provider signed in: one
	// person's grants spend one budget (Identity.Budget).
	return mcp.Identity{Subject: c.Subject, Role: c.Role, TokenID: c.Grant, Principal: s.principal(c.Token, c.Subject)}, c.ExpiresAt.Time, nil
}

// provingTokenActive reports whether the service token a grant was made
// with is still good; a grant made by an upstream sign-in (no token)
// lasts as long as its refresh tokens, unless revoked.
func (s *Server) provingTokenActive(tid string, now time.Time) bool {
	if tid == "" {
		return true
	}
	tok, ok := s.cfg.Tokens.ByID(tid)
	return ok && tok.Active(now)
}

// grantEnd is when grant g ends however often it is refreshed: its
// lifetime from consent, and for a grant made through the upstream
// provider (no service token behind it) the provider's daily check.
func (s *Server) grantEnd(g store.OAuthGrant) time.Time {
	life := s.cfg.GrantLifetime
	if g.TokenID == "" && s.cfg.UpstreamRecheck < life {
		life = s.cfg.UpstreamRecheck
	}
	return g.CreatedAt.Add(life)
}

// GrantPrefix starts every grant's id (an Identity's TokenID for a
// caller with one of this server's access tokens).
const GrantPrefix = "grant_"

// Active reports whether id, a caller with one of this server's access
// tokens, may still act: its grant is neither revoked nor past its
// lifetime, and the service token it was proven with is still good. What
// holds on to such a caller beyond one request (a console session, a
// stream) asks this again.
func (s *Server) Active(ctx context.Context, id mcp.Identity, now time.Time) bool {
	tid, ok := auth.PrincipalToken(id.Principal)
	if !ok {
		tid = "" // signed in upstream: no service token behind it
	}
	return s.grantActive(ctx, id.TokenID, tid, now) == nil
}

// grantActive reports whether grant id, made with service token tid, may
// still be used.
func (s *Server) grantActive(ctx context.Context, id, tid string, now time.Time) error {
	if !s.provingTokenActive(tid, now) {
		return ErrGrantRevoked
	}
	s.mu.Lock()
	until, ok := s.active[id]
	s.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	g, err := s.cfg.Store.OAuthGrant(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ErrGrantRevoked
	case err != nil:
		return err
	case !g.RevokedAt.IsZero() || !now.Before(s.grantEnd(g)):
		return ErrGrantRevoked
	}
	s.mu.Lock()
	if len(s.active) > 10000 {
		clear(s.active)
	}
	s.active[id] = now.Add(grantCacheFor)
	s.mu.Unlock()
	return nil
}

// Revoke revokes grant id now, here at once: what this replica holds
// open for its principal ends (Revoked).
func (s *Server) Revoke(ctx context.Context, id string) error {
	g, gerr := s.cfg.Store.OAuthGrant(ctx, id)
	if err := s.cfg.Store.RevokeOAuthGrant(ctx, id, s.cfg.Now().UTC()); err != nil {
		return err
	}
	s.forget(id)
	if gerr == nil {
		p := s.principal(g.TokenID, g.Subject)
		s.Heard(p)
		s.mu.Lock()
		announce := s.announce
		s.mu.Unlock()
		if announce != nil {
			announce(p)
		}
	}
	return nil
}

// Announce has fn told of each grant revoked on this replica, by its
// principal, for the other replicas to hear (Heard).
func (s *Server) Announce(fn func(principal string)) {
	s.mu.Lock()
	s.announce = fn
	s.mu.Unlock()
}

// principal is whom a grant made with service token tid ("": through the
// upstream provider) for subject acts for (mcp.Identity.Principal).
func (s *Server) principal(tid, subject string) string {
	if tid != "" {
		return tid
	}
	return auth.SubjectPrincipal(s.cfg.Issuer, subject)
}

// Revoked is closed once a grant of principal is revoked on this
// replica, by an admin or by its client (RFC 7009). What the replica
// holds open for them ends then: a per_user backend's upstream sessions
// and children. Their next call, with a grant still good, opens anew.
func (s *Server) Revoked(principal string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revoked == nil {
		s.revoked = map[string]chan struct{}{}
	}
	ch, ok := s.revoked[principal]
	if !ok {
		ch = make(chan struct{})
		s.revoked[principal] = ch
	}
	return ch
}

// Heard closes principal's channel (Revoked), if someone watches it: a
// grant of theirs was revoked, here or on another replica. The next
// watcher gets a new one.
func (s *Server) Heard(principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.revoked[principal]; ok {
		close(ch)
		delete(s.revoked, principal)
	}
}

// RevokeGrant is an admin's revocation of grant id, audited under the
// admin's identity; store.ErrNotFound for an unknown grant.
func (s *Server) RevokeGrant(ctx context.Context, id string, by mcp.Identity) error {
	start := s.cfg.Now()
	if _, err := s.cfg.Store.OAuthGrant(ctx, id); err != nil {
		return err
	}
	if err := s.Revoke(ctx, id); err != nil {
		return err
	}
	s.audit("revoke", by.Subject, id, by.Role, "ok", start)
	return nil
}

// Grants are every grant, oldest first.
func (s *Server) Grants(ctx context.Context) ([]store.OAuthGrant, error) {
	return s.cfg.Store.OAuthGrants(ctx)
}

// audit records one act of the server.
func (s *Server) audit(name, subject, tokenID, role, outcome string, start time.Time) {
	if s.cfg.Audit == nil {
		return
	}
	s.cfg.Audit(store.AuditRecord{Time: start.UTC(), Subject: subject, TokenID: tokenID, Role: role, Kind: "oauth",
		Name: name, Outcome: outcome, Duration: s.cfg.Now().Sub(start)})
}

// pkceMatches reports whether verifier answers the S256 challenge
// (RFC 7636 §4.6), verifier's form included.
func pkceMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 || strings.ContainsFunc(verifier, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r))
	}) {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return hmac.Equal([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge))
}
