// validate.go checks a configuration as a whole, so that a bad file is
// refused with the key at fault named, before anything starts.

package config

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/loopback"
	"github.com/mcpgate/mcpgate/internal/policy"
)

var entryKinds = map[string]bool{"": true, "tool": true, "resource": true, "prompt": true}

// KeyError is a configuration error at one key.
type KeyError struct {
	Key string // dotted path, e.g. "rate_limits.entries[2].name"
	Msg string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Msg }

func bad(key, format string, args ...any) error {
	return &KeyError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Validate reports the first problem, naming its key.
func (c *Config) Validate() error {
	if err := c.validateStore(); err != nil {
		return err
	}
	if err := c.validateCluster(); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return bad("listen", "not a host:port address: %v", err)
	}
	if c.Metrics.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Metrics.Listen); err != nil {
			return bad("metrics.listen", "not a host:port address: %v", err)
		}
	}
	if d := c.Metrics.DashboardURL; d != "" {
		if u, err := url.Parse(d); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return bad("metrics.dashboard_url", "not an http:// or https:// URL")
		}
	}
	for name, base := range c.Roles {
		if policy.IsBase(name) {
			return bad("roles."+name, "%q is a base role and cannot be redefined", name)
		}
		if !policy.IsBase(base) {
			return bad("roles."+name, "maps onto %q; must be viewer, editor or admin", base)
		}
	}
	if !c.KnownRole(c.Auth.Identity.Role) {
		return bad("auth.identity.role", "unknown role %q", c.Auth.Identity.Role)
	}
	if err := c.Auth.JWT.validate(); err != nil {
		return err
	}
	if err := c.validateOAuthClient(); err != nil {
		return err
	}
	if _, err := c.Vault.Key("vault"); err != nil {
		return err
	}
	if err := c.validateCatalogue(); err != nil {
		return err
	}
	if err := c.validatePolicy(); err != nil {
		return err
	}
	if err := c.validateInterceptors(); err != nil {
		return err
	}
	if err := c.validateOAuth(); err != nil {
		return err
	}
	if err := validLimit("rate_limits.default", c.RateLimits.Default); err != nil {
		return err
	}
	for role, l := range c.RateLimits.Roles {
		if !c.KnownRole(role) {
			return bad("rate_limits.roles."+role, "unknown role %q", role)
		}
		if err := validLimit("rate_limits.roles."+role, l); err != nil {
			return err
		}
	}
	for i, e := range c.RateLimits.Entries {
		key := fmt.Sprintf("rate_limits.entries[%d]", i)
		if !entryKinds[e.Kind] {
			return bad(key+".kind", "%q is not tool, resource or prompt", e.Kind)
		}
		if e.Name == "" {
			return bad(key+".name", "required")
		}
		if _, err := path.Match(e.Name, ""); err != nil {
			return bad(key+".name", "bad pattern %q: %v", e.Name, err)
		}
		if err := validLimit(key, e.LimitConfig); err != nil {
			return err
		}
	}
	for key, d := range map[string]Duration{
		"http.session_idle_timeout": c.HTTP.SessionIdle,
		"audit.flush_every":         c.Audit.FlushEvery,
		"startup_wait":              c.StartupWait,
	} {
		if d.invalid != "" {
			return bad(key, "%q is not a duration (write 30s, 5m, 1h)", d.invalid)
		}
		if d.Duration < 0 {
			return bad(key, "must not be negative")
		}
	}
	if c.HTTP.MaxBodyBytes < 0 {
		return bad("http.max_body_bytes", "must not be negative")
	}
	if err := c.Tracing.validate(); err != nil {
		return err
	}
	if err := c.Outbound.validate(); err != nil {
		return err
	}
	return c.validateBackends()
}

// KnownRole reports whether name is a base role or a configured custom one.
func (c *Config) KnownRole(name string) bool {
	if policy.IsBase(name) {
		return true
	}
	_, ok := c.Roles[name]
	return ok
}

func validLimit(key string, l LimitConfig) error {
	if l.Rate < 0 {
		return bad(key+".rate", "must not be negative")
	}
	if l.Burst < 0 {
		return bad(key+".burst", "must not be negative")
	}
	if l.Rate > 0 && l.Burst == 0 {
		return bad(key+".burst", "must be at least 1 when rate is set")
	}
	return nil
}

func (j *JWT) validate() error {
	if j == nil {
		return nil
	}
	if j.Leeway.invalid != "" {
		return bad("auth.jwt.leeway", "%q is not a duration", j.Leeway.invalid)
	}
	switch j.Algorithm {
	case "HS256":
		if (j.SecretEnv == "") == (j.SecretFile == "") {
			return bad("auth.jwt", "HS256 needs exactly one of secret_env or secret_file")
		}
		if j.PublicKeyFile != "" || j.JWKSURL != "" {
			return bad("auth.jwt", "HS256 takes a secret, not public_key_file or jwks_url")
		}
	case "RS256", "ES256":
		if (j.PublicKeyFile == "") == (j.JWKSURL == "") {
			return bad("auth.jwt", "%s needs exactly one of public_key_file or jwks_url", j.Algorithm)
		}
		if j.SecretEnv != "" || j.SecretFile != "" {
			return bad("auth.jwt", "%s takes public keys, not a secret", j.Algorithm)
		}
	case "":
		return bad("auth.jwt.algorithm", "required (HS256, RS256 or ES256)")
	default:
		return bad("auth.jwt.algorithm", "%q is not HS256, RS256 or ES256", j.Algorithm)
	}
	return nil
}

func (c *Config) validateOAuth() error {
	o := c.Auth.OAuth
	if o == nil {
		return nil
	}
	if c.Auth.Disabled {
		return bad("auth.oauth", "needs authentication on (auth.disabled is true)")
	}
	if o.Leeway.invalid != "" {
		return bad("auth.oauth.leeway", "%q is not a duration", o.Leeway.invalid)
	}
	if o.Resource == "" || o.resourceDefaulted {
		host, port, _ := net.SplitHostPort(c.Listen)
		if !loopback.Host(host) || port == "0" {
			return bad("auth.oauth.resource", "required: the gateway's MCP URL as clients reach it (it defaults to http://LISTEN/mcp only on a loopback listen address with a fixed port)")
		}
		o.Resource, o.resourceDefaulted = "http://"+c.Listen+"/mcp", true
	}
	if err := fetchableURL("auth.oauth.resource", o.Resource); err != nil {
		return err
	}
	if u, _ := url.Parse(o.Resource); u.Fragment != "" || strings.Contains(o.Resource, "#") {
		return bad("auth.oauth.resource", "must not have a fragment")
	}
	if len(o.AuthorizationServers) == 0 && !o.Builtin {
		return bad("auth.oauth.authorization_servers", "required: the issuers whose access tokens are accepted (or builtin: true)")
	}
	for key, d := range map[string]Duration{"access_lifetime": o.AccessLifetime, "refresh_lifetime": o.RefreshLifetime, "grant_lifetime": o.GrantLifetime} {
		switch {
		case d.invalid != "":
			return bad("auth.oauth."+key, "%q is not a duration", d.invalid)
		case d.Duration < 0 || (d.Duration != 0 && !o.Builtin):
			return bad("auth.oauth."+key, "is the built-in server's (builtin: true), and positive")
		}
	}
	if o.MaxClients < 0 || (o.MaxClients != 0 && !o.Builtin) {
		return bad("auth.oauth.max_clients", "is the built-in server's (builtin: true), and positive")
	}
	if o.MaxGrants < 0 || (o.MaxGrants != 0 && !o.Builtin) {
		return bad("auth.oauth.max_grants", "is the built-in server's (builtin: true), and positive")
	}
	if u := o.Upstream; u != nil {
		if err := c.validateUpstream(u, o.Builtin); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for i, s := range o.AuthorizationServers {
		key := fmt.Sprintf("auth.oauth.authorization_servers[%d]", i)
		if err := fetchableURL(key+".issuer", s.Issuer); err != nil {
			return err
		}
		if seen[s.Issuer] {
			return bad(key+".issuer", "%s is listed twice", s.Issuer)
		}
		seen[s.Issuer] = true
		switch s.Algorithm {
		case "", "RS256", "ES256":
		default:
			return bad(key+".algorithm", "%q is not RS256 or ES256 (access tokens are signed by the server's public keys)", s.Algorithm)
		}
		if s.JWKSURL != "" {
			if err := fetchableURL(key+".jwks_url", s.JWKSURL); err != nil {
				return err
			}
		}
		if s.RoleClaim == "" && len(o.Scopes) == 0 {
			return bad(key, "its tokens could grant no role: map scopes (auth.oauth.scopes) or name a role_claim")
		}
	}
	for scope, role := range o.Scopes {
		if scope == "" || strings.ContainsAny(scope, " \t\"\\") {
			return bad("auth.oauth.scopes", "%q is not a scope", scope)
		}
		if !c.KnownRole(role) {
			return bad("auth.oauth.scopes."+scope, "unknown role %q", role)
		}
	}
	return nil
}

// fetchableURL checks an absolute URL the gateway or its clients fetch:
// https, or http on a loopback host (oauthmeta.CheckFetchURL's rule).
func fetchableURL(key, s string) error {
	if s == "" {
		return bad(key, "required")
	}
	if err := oauthmeta.CheckFetchURL(s); err != nil {
		return bad(key, "%v", err)
	}
	return nil
}

func (c *Config) validateUpstream(u *OAuthUpstream, builtin bool) error {
	const key = "auth.oauth.upstream"
	switch {
	case !builtin:
		return bad(key, "is the built-in server's sign-in (builtin: true)")
	case u.ClientID == "":
		return bad(key+".client_id", "required: the gateway's client at the provider")
	case u.Recheck.invalid != "" || u.Recheck.Duration < 0:
		return bad(key+".recheck", "is a positive duration, such as 24h")
	case u.ClientSecretFrom != "" && u.ClientSecretFile != "":
		return bad(key, "name the client secret in client_secret_from or client_secret_file, not both")
	case u.Algorithm != "" && u.Algorithm != "RS256" && u.Algorithm != "ES256":
		return bad(key+".algorithm", "%q is not RS256 or ES256", u.Algorithm)
	case u.DefaultRole != "" && !c.KnownRole(u.DefaultRole):
		return bad(key+".default_role", "unknown role %q", u.DefaultRole)
	}
	if err := fetchableURL(key+".issuer", u.Issuer); err != nil {
		return err
	}
	for v, role := range u.Roles {
		if !c.KnownRole(role) {
			return bad(key+".roles."+v, "unknown role %q", role)
		}
	}
	return nil
}
