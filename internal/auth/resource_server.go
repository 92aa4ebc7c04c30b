// resource_server.go makes the gateway an OAuth 2.1 protected resource (MCP
// authorization, 2025-06-18 onwards). It accepts access tokens, JWTs (RFC
// 9068), from the authorization servers it is told to trust. It finds their
// keys by discovery (RFC 8414, then OpenID Connect Discovery). It takes
// only tokens meant for it: the audience must name its canonical resource
// URI (RFC 8707). A token's role comes from its scopes, mapped by the
// configuration (the highest role any of them grants), or from a claim. A
// token with none of the mapped scopes is refused for insufficient scope,
// with the scopes it would need.
//
// Discovery happens once, at startup: an issuer that cannot be reached,
// or whose metadata names another issuer (RFC 8414 §3.3), refuses the
// configuration instead of the first request.

package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/mcp"
)

// Ways an access token is refused beyond a JWT's.
var (
	// ErrUntrustedIssuer is a token from an authorization server not
	// configured here.
	ErrUntrustedIssuer = errors.New("auth: oauth: issuer not trusted")
	// ErrInsufficientScope is a valid token that grants no role here.
	ErrInsufficientScope = errors.New("auth: oauth: insufficient scope")
)

// OAuthConfig says which access tokens to trust.
type OAuthConfig struct {
	// Resource is the gateway's canonical resource URI (its MCP
	// endpoint's URL, RFC 8707): every token's aud must name it.
	Resource string
	Issuers  []OAuthIssuer
	// Scopes maps a scope to the role it grants.
	Scopes map[string]string
	// Level ranks roles (higher: more), to pick a token's highest; it is
	// policy.Roles.Level.
	Level  func(role string) (int, bool)
	Leeway time.Duration
	// HTTPClient makes discovery and JWKS requests (default: one under
	// Outbound per issuer).
	HTTPClient *http.Client
	// Outbound is the policy of those requests (nil: the default): an
	// issuer's origin and a configured JWKS URL's are reached whatever
	// their address, a jwks_uri its metadata names elsewhere is checked.
	Outbound *egress.Policy
	// Local is an authorization server in this process (the built-in
	// one), whose tokens it checks itself; nil: none.
	Local LocalIssuer
}

// LocalIssuer is an authorization server in this process.
type LocalIssuer interface {
	Issuer() string
	// Verify checks one of its access tokens at now: the caller's
	// identity and when the token expires.
	Verify(ctx context.Context, token string, now time.Time) (mcp.Identity, time.Time, error)
}

// OAuthIssuer is one trusted authorization server.
type OAuthIssuer struct {
	Issuer    string // its issuer identifier, exactly as its metadata states it
	Algorithm string // RS256 (default) or ES256
	JWKSURL   string // "": the jwks_uri of its metadata
	RoleClaim string // a claim naming the role, when no mapped scope does
}

// OAuthVerifier checks access tokens against an OAuthConfig.
type OAuthVerifier struct {
	resource  string
	issuers   map[string]*oauthIssuer
	scopes    map[string]string
	level     func(string) (int, bool)
	supported []string // every mapped scope, sorted
	least     []string // the scopes that grant the least role, for a challenge
}

type oauthIssuer struct {
	roleClaim string
	jwt       *JWTVerifier
	local     LocalIssuer // instead of jwt and roleClaim
}

// NewOAuthVerifier checks cfg and discovers every issuer's keys.
func NewOAuthVerifier(ctx context.Context, cfg OAuthConfig) (*OAuthVerifier, error) {
	if _, err := oauthmeta.CanonicalResource(cfg.Resource); err != nil {
		return nil, err
	}
	if len(cfg.Issuers) == 0 && cfg.Local == nil {
		return nil, errors.New("auth: oauth: no authorization server to trust")
	}
	if cfg.Level == nil {
		return nil, errors.New("auth: oauth: no role ranking")
	}
	v := &OAuthVerifier{resource: cfg.Resource, issuers: map[string]*oauthIssuer{}, scopes: cfg.Scopes, level: cfg.Level}
	lowest := 0
	for scope, role := range cfg.Scopes {
		n, ok := cfg.Level(role)
		if !ok {
			return nil, fmt.Errorf("auth: oauth: scope %q grants %q, which is not a role", scope, role)
		}
		v.supported = append(v.supported, scope)
		switch {
		case lowest == 0 || n < lowest:
			lowest, v.least = n, []string{scope}
		case n == lowest:
			v.least = append(v.least, scope)
		}
	}
	slices.Sort(v.supported)
	slices.Sort(v.least)
	if cfg.Local != nil {
		v.issuers[cfg.Local.Issuer()] = &oauthIssuer{local: cfg.Local}
	}
	for _, is := range cfg.Issuers {
		if _, dup := v.issuers[is.Issuer]; dup {
			return nil, fmt.Errorf("auth: oauth: issuer %s is listed twice", is.Issuer)
		}
		if is.RoleClaim == "" && len(cfg.Scopes) == 0 {
			return nil, fmt.Errorf("auth: oauth: issuer %s: no scope mapping and no role claim: its tokens could grant no role", is.Issuer)
		}
		client := cfg.HTTPClient
		if client == nil {
			client = cfg.Outbound.Client(is.Issuer, is.JWKSURL)
		}
		jwks := is.JWKSURL
		if jwks == "" {
			md, err := oauthmeta.DiscoverAuthorizationServer(ctx, client, is.Issuer)
			if err != nil {
				return nil, err
			}
			jwks = md.JWKSURI
		}
		if err := oauthmeta.CheckFetchURL(jwks); err != nil {
			return nil, fmt.Errorf("auth: oauth: issuer %s: jwks_uri: %w", is.Issuer, err)
		}
		jv, err := NewJWTVerifier(ctx, JWTConfig{Algorithm: cmp.Or(is.Algorithm, "RS256"), JWKSURL: jwks, Issuer: is.Issuer,
			Audience: cfg.Resource, Leeway: cfg.Leeway, HTTPClient: client})
		if err != nil {
			return nil, fmt.Errorf("auth: oauth: issuer %s: %w", is.Issuer, err)
		}
		v.issuers[is.Issuer] = &oauthIssuer{roleClaim: is.RoleClaim, jwt: jv}
	}
	return v, nil
}

// Resource is the canonical resource URI tokens must be meant for.
func (v *OAuthVerifier) Resource() string { return v.resource }

// Issuers are the trusted authorization servers, sorted.
func (v *OAuthVerifier) Issuers() []string {
	out := make([]string, 0, len(v.issuers))
	for is := range v.issuers {
		out = append(out, is)
	}
	slices.Sort(out)
	return out
}

// ScopesSupported are every scope that grants a role, sorted.
func (v *OAuthVerifier) ScopesSupported() []string { return v.supported }

// issuer is the trusted issuer token names (unverified), or nil: it only
// chooses whose keys check the token (that issuer's verifier then
// requires iss to be it), and, beside a JWT verifier, which checks it.
func (v *OAuthVerifier) issuer(token string) *oauthIssuer { return v.issuers[unverifiedIssuer(token)] }

func unverifiedIssuer(token string) string {
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		return ""
	}
	iss, _ := claims["iss"].(string)
	return iss
}

// verify checks an access token of is (from issuer; nil: an untrusted
// one) at now: the issuer's signature, exp, issuer and audience, then the
// role its scopes (or claim) grant.
func (v *OAuthVerifier) verify(ctx context.Context, is *oauthIssuer, token string, now time.Time) (mcp.Identity, time.Time, error) {
	if is == nil {
		return mcp.Identity{}, time.Time{}, ErrUntrustedIssuer
	}
	if is.local != nil {
		return is.local.Verify(ctx, token, now)
	}
	claims, err := is.jwt.claims(ctx, token, now)
	if err != nil {
		return mcp.Identity{}, time.Time{}, err
	}
	role := v.roleOf(claims)
	if role == "" && is.roleClaim != "" {
		role, _ = claims[is.roleClaim].(string)
	}
	if role == "" {
		return mcp.Identity{}, time.Time{}, ErrInsufficientScope
	}
	return is.jwt.identity(claims, token, role)
}

// roleOf is the highest role the token's scopes grant ("" for none): the
// scope claim (RFC 9068: a space-separated string), or scp (a string or
// an array, as some providers write it).
func (v *OAuthVerifier) roleOf(claims jwt.MapClaims) string {
	var scopes []string
	for _, name := range []string{"scope", "scp"} {
		switch s := claims[name].(type) {
		case string:
			scopes = append(scopes, strings.Fields(s)...)
		case []any:
			for _, e := range s {
				if str, ok := e.(string); ok {
					scopes = append(scopes, str)
				}
			}
		}
	}
	roles := make([]string, 0, len(scopes))
	for _, s := range scopes {
		if role, ok := v.scopes[s]; ok {
			roles = append(roles, role)
		}
	}
	return policy.Highest(v.level, roles...)
}
