// Package config is mcpgate's one configuration story: a typed Config,
// loaded from YAML, defaulted and validated in one place, with every error
// naming the key at fault. Flags override the file in the command; the
// components are built from the result.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is the whole configuration of `mcpgate serve`.
type Config struct {
	// Listen is the HTTP address (default 127.0.0.1:8080, loopback: safe
	// by default).
	Listen string `yaml:"listen"`
	// Store is the SQLite database file (default
	// $XDG_DATA_HOME/mcpgate/mcpgate.db), or a PostgreSQL URL
	// (postgres://USER@HOST/DATABASE) shared by replicas; see store.go.
	Store string `yaml:"store"`
	// StorePasswordFile holds the PostgreSQL store's password (a trailing
	// newline cut); without it the driver reads PGPASSWORD or ~/.pgpass.
	StorePasswordFile string `yaml:"store_password_file"`
	// HTTP configures the MCP endpoint: Streamable HTTP at /mcp, legacy SSE
	// at /sse.
	HTTP HTTP `yaml:"http"`
	// Auth configures authentication: service tokens always, JWT if set.
	Auth Auth `yaml:"auth"`
	// Roles maps custom role names onto viewer, editor or admin.
	Roles RolesConfig `yaml:"roles"`
	// RateLimits configures the call gate's token buckets (none by default).
	RateLimits RateLimits `yaml:"rate_limits"`
	// Audit configures the audit log of gated calls, kept in the store.
	Audit Audit `yaml:"audit"`
	// Metrics configures /metrics (Prometheus; admins only on the main address).
	Metrics MetricsConfig `yaml:"metrics"`
	// Backends are the MCP servers relayed (stdio, http, sse, proxy, process).
	Backends []BackendConfig `yaml:"backends"`
	// Tracing configures OpenTelemetry traces (OTLP/HTTP export).
	Tracing Tracing `yaml:"tracing"`
	// Outbound configures the fetches made on a third party's word
	// (outbound.go): public addresses only unless allowed here.
	Outbound Outbound `yaml:"outbound"`
	// StartupWait holds the first requests that read the catalogue (the lists,
	// calls, initialize) until every configured backend has made its first
	// attempt to come up. It waits at most this long (default 10s; 0s: no
	// wait). A client connecting at once so does not see an empty catalogue.
	StartupWait Duration `yaml:"startup_wait"`
	// Redis, when set, is where replicas keep what they must agree on at
	// once (rate buckets, token events, session counts); see cluster.go.
	Redis RedisConfig `yaml:"redis"`
	// Sessions configures sealed session ids (cluster.go).
	Sessions Sessions `yaml:"sessions"`
	// Catalogue chooses which view of the catalogue callers get: the full
	// one (the default) or the compact one (short descriptions, schemas
	// without prose), by role or token; /mcp/compact always serves the
	// compact one. See catalogue.go.
	Catalogue Catalogue `yaml:"catalogue"`
	// OAuthClient configures the gateway as an OAuth client of the
	// backends that demand access tokens (the authorization code flow an
	// admin does once; see oauth_client.go).
	OAuthClient OAuthClientConfig `yaml:"oauth_client"`
	// Vault names the key that seals each person's stored credentials
	// for per_user backends (key_from or key_file; identity.go).
	Vault VaultConfig `yaml:"vault"`
	// Policy is the gate's rules in CEL, finer than roles (rules.go).
	Policy PolicyConfig `yaml:"policy"`
	// Interceptors are hooks called at fixed points of every gated call
	// the gate admitted, in order (interceptors.go).
	Interceptors []InterceptorConfig `yaml:"interceptors"`
}

// HTTP configures the MCP endpoint's transports.
type HTTP struct {
	// Stateless serves Streamable HTTP without sessions: each POST stands
	// alone and there is no server-to-client stream.
	Stateless bool `yaml:"stateless"`
	// Sessionless serves 2026-07-28 (sessionless) requests beside the
	// 2025 era on /mcp and stdio (default true; false serves the 2025
	// era only). See SessionlessOn.
	Sessionless *bool `yaml:"sessionless"`
	// MaxBodyBytes bounds a request body (default 4 MiB); over it, 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// BodyTimeout bounds the time to read a request body (default 30s).
	BodyTimeout Duration `yaml:"body_timeout"`
	// AllowedHosts are Host values accepted beyond loopback ones (DNS-rebinding
	// protection): the names clients reach the gateway by.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// AllowedOrigins are browser Origins accepted beyond loopback ones. A page
	// on an accepted Origin may read the MCP endpoints, the OAuth metadata and
	// the token, registration and revocation endpoints (CORS, no cookies).
	AllowedOrigins []string `yaml:"allowed_origins"`
	// SessionIdle ends a session nobody used for this long (default 30m).
	SessionIdle Duration `yaml:"session_idle_timeout"`
	// MaxSessions caps live sessions per transport (default 10000); at the cap
	// the least recently used idle session makes room.
	MaxSessions int `yaml:"max_sessions"`
	// MaxSessionsPerIdentity caps one identity's sessions on each
	// transport (default 64).
	MaxSessionsPerIdentity int `yaml:"max_sessions_per_identity"`
}

// SessionlessOn reports whether 2026-07-28 is served (the default).
func (h HTTP) SessionlessOn() bool { return h.Sessionless == nil || *h.Sessionless }

// Auth configures authentication.
type Auth struct {
	// Disabled turns authentication off, for local development only:
	// the server refuses to start so on a non-loopback address.
	Disabled bool `yaml:"disabled"`
	// Identity is who the caller is when authentication is off, and on
	// stdio, where there is no credential to present.
	Identity Identity `yaml:"identity"`
	// JWT, when set, also accepts bearer JWTs (HS256, RS256, ES256, JWKS).
	JWT *JWT `yaml:"jwt"`
	// OAuth, when set, makes the gateway an OAuth 2.1 protected resource:
	// it publishes its Protected Resource Metadata and accepts the access
	// tokens of the authorization servers listed, beside service tokens.
	OAuth *OAuth `yaml:"oauth"`
}

// OAuth configures the gateway as an OAuth protected resource.
type OAuth struct {
	// Resource is the gateway's canonical MCP URL, as clients reach it
	// (https://mcp.example.com/mcp; http only on loopback). Every access
	// token's audience must name it (RFC 8707). Default, on a loopback
	// listen address with a port: http://LISTEN/mcp, so that the built-in
	// server on one machine needs no other key; required otherwise.
	Resource string `yaml:"resource"`
	// resourceDefaulted: Resource is the default, made again from the
	// listen address at each validation (a --listen flag changes it).
	resourceDefaulted bool
	// AuthorizationServers are the issuers whose access tokens are
	// accepted; their keys are found by discovery at startup.
	AuthorizationServers []OAuthServer `yaml:"authorization_servers"`
	// Scopes maps a scope to the role it grants; a token's role is the
	// highest its scopes grant. They are the metadata's scopes_supported.
	Scopes map[string]string `yaml:"scopes"`
	// Leeway is the clock skew allowed on exp and nbf (default 0s).
	Leeway Duration `yaml:"leeway"`
	// Builtin runs mcpgate's own authorization server at the resource's
	// origin (package authserver): a person signs in with a service token
	// and consents, and the client gets tokens of at most that token's
	// role. With no scopes mapped, each role is a scope of its name.
	Builtin bool `yaml:"builtin"`
	// AccessLifetime and RefreshLifetime bound the built-in server's
	// tokens (default 10m and 720h); MaxClients the clients Dynamic
	// Client Registration may store (default 1000).
	AccessLifetime  Duration `yaml:"access_lifetime"`
	RefreshLifetime Duration `yaml:"refresh_lifetime"`
	MaxClients      int      `yaml:"max_clients"`
	// MaxGrants bounds the live grants one person holds at the built-in
	// server (default 20): each grant is a credential, and one person
	// minting them at will hoarded credentials (their budgets are one).
	MaxGrants int `yaml:"max_grants"`
	// GrantLifetime bounds a grant of the built-in server from consent
	// (default 720h): then its person signs in again, however often its
	// refresh tokens were rotated.
	GrantLifetime Duration `yaml:"grant_lifetime"`
	// Upstream, with builtin, lets people sign in on the built-in
	// server's page through an OpenID Connect provider instead of with a
	// service token.
	Upstream *OAuthUpstream `yaml:"upstream"`
}

// OAuthUpstream is an OpenID Connect provider people sign in with.
type OAuthUpstream struct {
	// Issuer is the provider's issuer identifier, exactly as its
	// discovery document states it.
	Issuer string `yaml:"issuer"`
	// ClientID is the gateway's client at the provider, registered with
	// the redirect URI <resource origin>/oauth/upstream/callback.
	ClientID string `yaml:"client_id"`
	// Recheck bounds a grant made through the provider (default 24h):
	// the person signs in at the provider again at least this often, so
	// that the provider is asked whether they still may.
	Recheck Duration `yaml:"recheck"`
	// ClientSecretFrom names the environment variable holding its secret;
	// ClientSecretFile a file holding it. Neither: a public client (PKCE).
	ClientSecretFrom string `yaml:"client_secret_from"`
	ClientSecretFile string `yaml:"client_secret_file"`
	// Scopes are asked for (default openid, email, profile).
	Scopes []string `yaml:"scopes"`
	// SubjectClaim names who the person is in the audit log (default
	// email, else sub).
	SubjectClaim string `yaml:"subject_claim"`
	// Algorithm signs the provider's ID tokens: RS256 (default) or ES256.
	Algorithm string `yaml:"algorithm"`
	// RoleClaim names the ID token's claim holding a person's role or
	// groups (default "role"); Roles maps its values to roles (without
	// it, a value that is a role's name is that role); the highest wins.
	RoleClaim string            `yaml:"role_claim"`
	Roles     map[string]string `yaml:"roles"`
	// DefaultRole is the role of a person no value maps ("": refused).
	DefaultRole string `yaml:"default_role"`
	// Name is what the sign-in page's link says (default the issuer's
	// host).
	Name string `yaml:"name"`
}

// OAuthServer is one trusted authorization server.
type OAuthServer struct {
	// Issuer is its issuer identifier, exactly as its metadata states it.
	Issuer string `yaml:"issuer"`
	// Algorithm is how its access tokens are signed: RS256 (default) or
	// ES256.
	Algorithm string `yaml:"algorithm"`
	// JWKSURL overrides the jwks_uri of its metadata.
	JWKSURL string `yaml:"jwks_url"`
	// RoleClaim names a claim holding the role, for tokens none of whose
	// scopes is mapped.
	RoleClaim string `yaml:"role_claim"`
}

// Identity names a fixed caller.
type Identity struct {
	// Subject is the caller's name in the audit log and the metrics.
	Subject string `yaml:"subject"`
	// Role is the caller's role.
	Role string `yaml:"role"`
}

// JWT configures bearer JWT verification. Secrets come from the
// environment or a file, never from the YAML itself.
type JWT struct {
	Algorithm string `yaml:"algorithm"` // HS256, RS256 or ES256
	// SecretEnv names the environment variable holding the HS256 secret.
	SecretEnv string `yaml:"secret_env"`
	// SecretFile holds the HS256 secret instead.
	SecretFile string `yaml:"secret_file"`
	// PublicKeyFile is the PEM public key of RS256 or ES256.
	PublicKeyFile string `yaml:"public_key_file"`
	// JWKSURL is where RS256 or ES256 keys are fetched (and refetched).
	JWKSURL string `yaml:"jwks_url"`
	// Issuer, when set, must equal the token's iss.
	Issuer string `yaml:"issuer"`
	// Audience, when set, must be in the token's aud.
	Audience string `yaml:"audience"`
	// RoleClaim names the claim holding the role (default "role").
	RoleClaim string `yaml:"role_claim"`
	// SubjectClaim names the claim holding the subject (default "sub").
	SubjectClaim string `yaml:"subject_claim"`
	// Leeway is the clock skew allowed on exp and nbf (default 0s).
	Leeway Duration `yaml:"leeway"`
}

// RolesConfig maps custom role names onto viewer, editor or admin.
type RolesConfig map[string]string

// RateLimits configures the call gate's token buckets.
type RateLimits struct {
	// Default is every caller's bucket unless a role or entry rule applies.
	Default LimitConfig `yaml:"default"`
	// Roles gives a role (custom, then its base) a bucket of its own shape.
	Roles map[string]LimitConfig `yaml:"roles"`
	// Entries are rules for matching entries, tried in order; the first wins.
	Entries []EntryLimitConfig `yaml:"entries"`
}

// LimitConfig is one token bucket: Rate tokens a second (0: unlimited), Burst at
// most at once.
type LimitConfig struct {
	// Rate is the refill in calls a second; 0 means unlimited.
	Rate float64 `yaml:"rate"`
	// Burst is how many calls a full bucket admits at once (at least 1).
	Burst int `yaml:"burst"`
	// PerEntry gives each entry its own bucket instead of one for all.
	PerEntry bool `yaml:"per_entry"`
}

// EntryLimitConfig overrides the limit for entries matching Kind and Name (a
// glob such as "expensive_*").
type EntryLimitConfig struct {
	// Kind is tool, resource or prompt; empty matches every kind.
	Kind string `yaml:"kind"`
	// Name is an entry name, or a path.Match glob such as "expensive_*".
	Name        string `yaml:"name"`
	LimitConfig `yaml:",inline"`
}

// Audit configures the audit log.
type Audit struct {
	// Disabled turns the audit log off.
	Disabled bool `yaml:"disabled"`
	// Async answers a call without waiting for its record to be written.
	// Records are then written in batches, and a process killed abruptly
	// loses the last of them. By default an answer waits for its record:
	// the records waiting are written in one transaction (a group commit).
	Async bool `yaml:"async"`
	// Journal writes the records waiting to a journal file in one write,
	// and releases their answers then. The store gets them in batches in
	// the background, and the next start writes what a killed process
	// left in the journal. On SQLite the journal is beside the database,
	// and on by default; false writes each group to the database before
	// its answers. On PostgreSQL it needs journal_dir and is on with it.
	Journal *bool `yaml:"journal"`
	// JournalDir, on a PostgreSQL store, is a folder on this replica's
	// own disk for the journal (a Kubernetes emptyDir, say). Answers then
	// wait for a local write, not for the shared database. The promise is
	// smaller: records in the journal survive the process, not the loss
	// of the disk, and a replica's next start on the same folder writes
	// them. Without it, every group waits for its transaction.
	JournalDir string `yaml:"journal_dir"`
	// FlushEvery, with async or the journal, is the longest a record
	// waits to be written to the store (default 200ms).
	FlushEvery Duration `yaml:"flush_every"`
}

// JournalOn says whether the group commit may use a journal (Journal).
func (a Audit) JournalOn() bool { return a.Journal == nil || *a.Journal }

// MetricsConfig configures the Prometheus endpoint. /metrics is always served on
// the main address, to admins only; Listen adds an unauthenticated one.
type MetricsConfig struct {
	// Listen is a separate loopback address ("127.0.0.1:9464") serving
	// /metrics without authentication, for a local scraper that holds no
	// token. A non-loopback address is refused. Empty: none.
	Listen string `yaml:"listen"`
	// DashboardURL is the fleet's dashboard (Grafana, over every
	// replica's metrics: deploy/grafana/mcpgate.json), linked from each
	// replica's console overview, which shows its own replica only.
	DashboardURL string `yaml:"dashboard_url"`
}

// Duration is a time.Duration written as "30s", "5m". A value that does
// not parse is kept and refused by Validate, which knows the key.
type Duration struct {
	time.Duration
	invalid string
	set     bool // the file gave a value (0s included)
}

// IsSet reports whether the file gave the duration (a zero one included).
func (d Duration) IsSet() bool { return d.set }

// UnmarshalYAML reads a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.invalid = s
		return nil
	}
	d.Duration, d.set = v, true
	return nil
}

// Load reads a configuration file; an empty path gives the defaults.
func Load(path string) (*Config, error) {
	if path == "" {
		return Parse(nil)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads YAML, rejecting unknown keys, then defaults and validates.
func Parse(b []byte) (*Config, error) {
	c := &Config{}
	if len(bytes.TrimSpace(b)) > 0 {
		var doc yaml.Node
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("not YAML: %w", err)
		}
		if err := checkKeys(&doc, reflect.TypeFor[Config](), ""); err != nil {
			return nil, err
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	c.defaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// DefaultStorePath is where the store lives unless configured.
func DefaultStorePath() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "mcpgate", "mcpgate.db")
}

// DefaultStartupWait is StartupWait's default.
const DefaultStartupWait = 10 * time.Second

func (c *Config) defaults() {
	if !c.StartupWait.IsSet() {
		c.StartupWait.Duration = DefaultStartupWait
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.Store == "" {
		c.Store = DefaultStorePath()
	}
	if c.Auth.Identity.Subject == "" {
		c.Auth.Identity.Subject = "local"
	}
	if c.Auth.Identity.Role == "" {
		c.Auth.Identity.Role = "admin"
	}
	if j := c.Auth.JWT; j != nil {
		if j.RoleClaim == "" {
			j.RoleClaim = "role"
		}
		if j.SubjectClaim == "" {
			j.SubjectClaim = "sub"
		}
	}
}
