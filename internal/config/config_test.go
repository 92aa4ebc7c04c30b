package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDefaultsAreSafe(t *testing.T) {
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" {
		t.Errorf("listen = %q, want a loopback address", c.Listen)
	}
	if c.Auth.Disabled {
		t.Error("authentication is off by default")
	}
	if c.Store == "" || !strings.HasSuffix(c.Store, "mcpgate.db") {
		t.Errorf("store = %q", c.Store)
	}
}

func TestFullFileParses(t *testing.T) {
	c, err := Parse([]byte(`
listen: 127.0.0.1:9000
store: /tmp/x.db
http: {stateless: true, max_body_bytes: 1024, allowed_hosts: [gw.internal], session_idle_timeout: 5m}
auth:
  jwt: {algorithm: RS256, jwks_url: "https://idp.example/jwks", issuer: iss, audience: aud, role_claim: mcp_role}
roles: {analyst: viewer, ops: editor}
rate_limits:
  default: {rate: 10, burst: 20}
  roles: {analyst: {rate: 1, burst: 2}}
  entries:
    - {kind: tool, name: "expensive_*", rate: 0.5, burst: 1, per_entry: true}
audit: {flush_every: 100ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Auth.JWT.RoleClaim != "mcp_role" || c.Auth.JWT.SubjectClaim != "sub" {
		t.Errorf("jwt claims = %+v", c.Auth.JWT)
	}
	if e := c.RateLimits.Entries[0]; e.Name != "expensive_*" || e.Rate != 0.5 || !e.PerEntry {
		t.Errorf("entry limit = %+v", e)
	}
	if c.HTTP.SessionIdle.Duration != 5*time.Minute || c.Audit.FlushEvery.Duration != 100*time.Millisecond {
		t.Errorf("durations = %v %v", c.HTTP.SessionIdle, c.Audit.FlushEvery)
	}
}

// A bad file is refused with an error naming the key at fault.
func TestErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name, yaml, key string
	}{
		{"unknown key", "listne: 127.0.0.1:1", "listne"},
		{"bad listen", "listen: nowhere", "listen"},
		{"bad metrics listen", "metrics:\n  listen: nowhere", "metrics.listen"},
		{"metrics dashboard not a URL", "metrics:\n  dashboard_url: javascript:alert(1)", "metrics.dashboard_url"},
		{"custom role onto unknown base", "roles: {analyst: superuser}", "roles.analyst"},
		{"base role redefined", "roles: {admin: viewer}", "roles.admin"},
		{"unknown identity role", "auth: {identity: {role: boss}}", "auth.identity.role"},
		{"jwt without algorithm", "auth: {jwt: {jwks_url: x}}", "auth.jwt.algorithm"},
		{"jwt unknown algorithm", "auth: {jwt: {algorithm: none}}", "auth.jwt.algorithm"},
		{"hs256 without secret", "auth: {jwt: {algorithm: HS256}}", "auth.jwt"},
		{"rs256 with a secret", "auth: {jwt: {algorithm: RS256, jwks_url: x, secret_env: S}}", "auth.jwt"},
		{"negative rate", "rate_limits: {default: {rate: -1, burst: 1}}", "rate_limits.default.rate"},
		{"rate without burst", "rate_limits: {default: {rate: 1}}", "rate_limits.default.burst"},
		{"role limit for unknown role", "rate_limits: {roles: {boss: {rate: 1, burst: 1}}}", "rate_limits.roles.boss"},
		{"entry limit kind", "rate_limits: {entries: [{kind: widget, name: x}]}", "rate_limits.entries[0].kind"},
		{"entry limit name", "rate_limits: {entries: [{kind: tool}]}", "rate_limits.entries[0].name"},
		{"entry limit bad glob", "rate_limits: {entries: [{kind: tool, name: '['}]}", "rate_limits.entries[0].name"},
		{"bad duration", "http: {session_idle_timeout: soon}", "http.session_idle_timeout"},
		{"bad leeway", "auth: {jwt: {algorithm: RS256, jwks_url: x, leeway: later}}", "auth.jwt.leeway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("error %q does not name %q", err, tt.key)
			}
			var ke *KeyError
			if errors.As(err, &ke) && ke.Key != tt.key {
				t.Fatalf("KeyError.Key = %q, want %q", ke.Key, tt.key)
			}
		})
	}
}
