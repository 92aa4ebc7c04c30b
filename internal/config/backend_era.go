// backend_era.go checks a backend's era key: which revisions of MCP the
// gateway speaks to it. auto (the default) asks with server/discover
// (2026-07-28) and falls back to initialize; session always initializes
// (2024-11-05 … 2025-11-25); sessionless requires 2026-07-28. Only stdio
// and http backends can be spoken to sessionless: legacy SSE is of the
// session era, and the container wire carries the session era's
// exchanges. A process backend's era is what its proxy speaks to the
// program (mcpgate proxy --upstream-era); a proxy backend's is the
// running proxy's own affair.

package config

import "github.com/mcpgate/mcpgate/internal/upstream"

// Values of Backend.Era.
const (
	EraAuto        = "auto"
	EraSession     = "session"
	EraSessionless = "sessionless"
)

func validateBackendEra(key string, b BackendConfig) error {
	switch b.Era {
	case "", EraAuto:
	case EraSession, EraSessionless:
		switch {
		case b.Kind == upstream.KindProxy:
			return bad(key+".era", "a proxy backend's era is the running proxy's own (mcpgate proxy --upstream-era)")
		case b.Era == EraSessionless && b.Kind != upstream.KindStdio && b.Kind != upstream.KindHTTP && b.Kind != upstream.KindProcess:
			return bad(key+".era", "%s is only for stdio, http and process backends", EraSessionless)
		}
	default:
		return bad(key+".era", "%q is not %s, %s or %s", b.Era, EraAuto, EraSession, EraSessionless)
	}
	return nil
}
