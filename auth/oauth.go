// oauth.go makes the gateway an OAuth 2.1 protected resource (MCP
// authorization, 2025-06-18 onwards): it accepts access tokens — JWTs
// (RFC 9068) — from the authorization servers it is told to trust, whose
// keys it finds by discovery (RFC 8414, then OpenID Connect Discovery),
// and only tokens meant for it: the audience must name its canonical
// resource URI (RFC 8707). A token's role comes from its scopes, mapped
// by the configuration (the highest role any of them grants), or from a
// claim. A token with none of the mapped scopes is refused for
// insufficient scope, with the scopes it would need.
//
// Discovery happens once, at startup: an issuer that cannot be reached,
// or whose metadata names another issuer (RFC 8414 §3.3), refuses the
// configuration instead of the first request.

package auth

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

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
	// access.Roles.Level.
	Level      func(role string) (int, bool)
	Leeway     time.Duration
	HTTPClient *http.Client // discovery and JWKS; default: 10s timeout
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
}

// NewOAuthVerifier checks cfg and discovers every issuer's keys.
func NewOAuthVerifier(ctx context.Context, cfg OAuthConfig) (*OAuthVerifier, error) {
	if _, err := CanonicalResource(cfg.Resource); err != nil {
		return nil, err
	}
	if len(cfg.Issuers) == 0 {
		return nil, errors.New("auth: oauth: no authorization server to trust")
	}
	if cfg.Level == nil {
		return nil, errors.New("auth: oauth: no role ranking")
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
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
	for _, is := range cfg.Issuers {
		if _, dup := v.issuers[is.Issuer]; dup {
			return nil, fmt.Errorf("auth: oauth: issuer %s is listed twice", is.Issuer)
		}
		if is.RoleClaim == "" && len(cfg.Scopes) == 0 {
			return nil, fmt.Errorf("auth: oauth: issuer %s: no scope mapping and no role claim: its tokens could grant no role", is.Issuer)
		}
		jwks := is.JWKSURL
		if jwks == "" {
			md, err := DiscoverAuthorizationServer(ctx, client, is.Issuer)
			if err != nil {
				return nil, err
			}
			jwks = md.JWKSURI
		}
		if err := checkFetchURL(jwks); err != nil {
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

// issues reports whether token names (unverified) an issuer trusted here:
// where a JWT verifier is configured too, this decides which checks it.
func (v *OAuthVerifier) issues(token string) bool {
	_, ok := v.issuers[unverifiedIssuer(token)]
	return ok
}

func unverifiedIssuer(token string) string {
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		return ""
	}
	iss, _ := claims["iss"].(string)
	return iss
}

// verify checks an access token at now: the issuer's signature, exp,
// issuer and audience, then the role its scopes (or claim) grant.
func (v *OAuthVerifier) verify(ctx context.Context, token string, now time.Time) (mcp.Identity, time.Time, error) {
	// The issuer named before the signature is checked only chooses whose
	// keys check it: that issuer's verifier then requires iss to be it.
	is, ok := v.issuers[unverifiedIssuer(token)]
	if !ok {
		return mcp.Identity{}, time.Time{}, ErrUntrustedIssuer
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
	best, bestLevel := "", 0
	for _, s := range scopes {
		role, ok := v.scopes[s]
		if !ok {
			continue
		}
		if n, _ := v.level(role); n > bestLevel {
			best, bestLevel = role, n
		}
	}
	return best
}

// CanonicalResource checks a resource URI as RFC 8707 and the MCP
// specification have it: absolute, https (http only on a loopback host),
// no fragment; and returns it parsed.
func CanonicalResource(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case s == "":
		return nil, errors.New("auth: oauth: the resource (the gateway's canonical MCP URL) is required")
	case err != nil || u.Host == "" || !u.IsAbs():
		return nil, fmt.Errorf("auth: oauth: resource %q is not an absolute URL", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, fmt.Errorf("auth: oauth: resource %q must not have a fragment", s)
	}
	if err := checkFetchURL(s); err != nil {
		return nil, fmt.Errorf("auth: oauth: resource: %w", err)
	}
	return u, nil
}

// checkFetchURL allows https anywhere and http on a loopback host only.
func checkFetchURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
			return nil
		}
	}
	return fmt.Errorf("%q: https is required (http only on a loopback host)", s)
}

// ServerMetadata is what the gateway reads of an authorization server's
// metadata (RFC 8414 §2).
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                     string   `json:"token_endpoint,omitempty"`
	JWKSURI                           string   `json:"jwks_uri,omitempty"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
}

// MetadataURLs are where an issuer's metadata may be, in the order the
// MCP specification has clients try them: RFC 8414's well-known path
// (inserted before the issuer's path), then OpenID Connect Discovery's
// (inserted, then appended).
func MetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("auth: oauth: issuer %q is not a URL without query or fragment", issuer)
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	origin := u.Scheme + "://" + u.Host
	if path == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}, nil
	}
	return []string{origin + "/.well-known/oauth-authorization-server" + path, origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration"}, nil
}

// DiscoverAuthorizationServer fetches issuer's metadata from the first of
// MetadataURLs that serves it, and checks that it names issuer exactly.
func DiscoverAuthorizationServer(ctx context.Context, client *http.Client, issuer string) (ServerMetadata, error) {
	if err := checkFetchURL(issuer); err != nil {
		return ServerMetadata{}, fmt.Errorf("auth: oauth: issuer: %w", err)
	}
	urls, err := MetadataURLs(issuer)
	if err != nil {
		return ServerMetadata{}, err
	}
	var tried []string
	for _, mu := range urls {
		md, status, err := fetchMetadata(ctx, client, mu)
		if err != nil {
			return ServerMetadata{}, fmt.Errorf("auth: oauth: issuer %s: %s: %w", issuer, mu, err)
		}
		if status == http.StatusOK {
			if md.Issuer != issuer {
				return ServerMetadata{}, fmt.Errorf("auth: oauth: issuer %s: its metadata at %s names the issuer %q (RFC 8414 §3.3: they must be equal)", issuer, mu, md.Issuer)
			}
			return md, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%d)", mu, status))
	}
	return ServerMetadata{}, fmt.Errorf("auth: oauth: issuer %s: no metadata at %s", issuer, strings.Join(tried, ", "))
}

func fetchMetadata(ctx context.Context, client *http.Client, u string) (ServerMetadata, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return ServerMetadata{}, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return ServerMetadata{}, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return ServerMetadata{}, resp.StatusCode, nil
	}
	var md ServerMetadata
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&md); err != nil {
		return ServerMetadata{}, 0, fmt.Errorf("metadata is not JSON: %w", err)
	}
	return md, http.StatusOK, nil
}
