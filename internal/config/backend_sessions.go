// backend_sessions.go checks a backend's upstream session keys: session,
// session_idle_timeout and session_max. Only kinds whose upstream sessions
// the gateway opens itself (stdio, http, sse) can have one per client;
// any other kind is refused the keys, naming the key.

package config

// Values of Backend.Session.
const (
	SessionShared    = "shared"
	SessionPerClient = "per-client"
)

func validateBackendSessions(key string, b BackendConfig) error {
	perClient := false
	switch b.Session {
	case "", SessionShared:
	case SessionPerClient:
		perClient = true
	default:
		return bad(key+".session", "%q is not %s or %s", b.Session, SessionShared, SessionPerClient)
	}
	set := map[string]bool{
		"session":              b.Session != "",
		"session_idle_timeout": b.SessionIdleTimeout.Duration != 0 || b.SessionIdleTimeout.invalid != "",
		"session_max":          b.SessionMax != 0,
	}
	for _, k := range []string{"session", "session_idle_timeout", "session_max"} {
		if set[k] && !b.Kind.PerClient() {
			return bad(key+"."+k, "not used by kind %s (only stdio, http and sse)", b.Kind)
		}
	}
	if d := b.SessionIdleTimeout; d.invalid != "" {
		return bad(key+".session_idle_timeout", "%q is not a duration (write 30s, 5m, 1h)", d.invalid)
	}
	if b.SessionIdleTimeout.Duration < 0 {
		return bad(key+".session_idle_timeout", "must not be negative")
	}
	if b.SessionMax < 0 {
		return bad(key+".session_max", "must not be negative")
	}
	if !perClient {
		if set["session_idle_timeout"] {
			return bad(key+".session_idle_timeout", "needs session: %s", SessionPerClient)
		}
		if set["session_max"] {
			return bad(key+".session_max", "needs session: %s", SessionPerClient)
		}
	}
	return nil
}
