// backend_era.go checks a backend's era key: which revisions of MCP the
// gateway speaks to it. auto (the default) asks with server/discover
// (2026-07-28) and falls back to initialize; session always initializes
// (2024-11-05 … 2025-11-25); sessionless requires 2026-07-28. Only stdio
// and http backends can be spoken to sessionless: legacy SSE is of the
// session era, and the container wire carries the session era's exchanges.

package config

// Values of Backend.Era.
const (
	EraAuto        = "auto"
	EraSession     = "session"
	EraSessionless = "sessionless"
)

func validateBackendEra(key string, b Backend) error {
	switch b.Era {
	case "", EraAuto, EraSession:
	case EraSessionless:
		if b.Kind != BackendStdio && b.Kind != BackendHTTP {
			return bad(key+".era", "%s is only for stdio and http backends", EraSessionless)
		}
	default:
		return bad(key+".era", "%q is not %s, %s or %s", b.Era, EraAuto, EraSession, EraSessionless)
	}
	return nil
}
