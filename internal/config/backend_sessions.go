// backend_sessions.go checks a backend's upstream session keys: session,
// session_idle_timeout and session_max. Only kinds whose upstream sessions
// the gateway opens itself (stdio, http, sse) can have one per client;
// any other kind is refused the keys, naming the key.

package config

import "github.com/mcpgate/mcpgate/internal/upstream"

func validateBackendSessions(key string, b BackendConfig) error {
	set := map[string]bool{
		"session":              b.Session != "",
		"session_idle_timeout": b.SessionIdleTimeout.Duration != 0 || b.SessionIdleTimeout.invalid != "",
		"session_max":          b.SessionMax != 0,
	}
	for _, k := range []string{"session", "session_idle_timeout", "session_max"} {
		if set[k] && !b.Kind.PerClient() && !(b.Identity.PerUser() && b.Kind.PerPrincipal()) {
			return bad(key+"."+k, "not used by kind %s (only stdio, http and sse, or any per_user backend)", b.Kind)
		}
	}
	if d := b.SessionIdleTimeout; d.invalid != "" {
		return bad(key+".session_idle_timeout", "%q is not a duration (write 30s, 5m, 1h)", d.invalid)
	}
	if p := upstream.CheckSessions(b.Kind, b.Session, b.Identity.PerUser(), b.SessionIdleTimeout.Duration, b.SessionMax); p != nil {
		return bad(key+"."+p.Key, "%s", p.Why)
	}
	return nil
}
