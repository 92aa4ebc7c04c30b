// guard.go protects the HTTP transports from DNS rebinding: a page on an
// attacker's domain that resolves to 127.0.0.1 can make a browser talk to a
// local server, but it cannot forge the Host or Origin the browser sends.
// Seed 003's server reflected any Origin; this one refuses what it does not
// know with 403.
//
// An Origin it does accept may also read the answers of the paths named in
// CORSPaths (CORS). A browser-based MCP client on another port or a
// configured origin, such as the Inspector's web UI, so connects, discovers
// the authorization server and redeems its tokens from the page. The
// preflight is answered here, before authentication (a preflight never
// carries a credential), and no credentials mode is granted: the gateway's
// callers present bearer tokens, never cookies, so a page can read only
// what its own token lets it.

package mcphttp

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/internal/loopback"
)

// GuardOptions lists what, beyond loopback, is allowed.
type GuardOptions struct {
	// AllowedHosts are extra Host header values (host or host:port) to
	// accept. Loopback names and addresses are always accepted.
	AllowedHosts []string
	// AllowedOrigins are extra Origin values (scheme://host[:port]) to
	// accept. Loopback origins are always accepted; requests without an
	// Origin (non-browser clients) are not affected.
	AllowedOrigins []string
	// CORSPaths are the paths (exact, or a prefix when they end in /)
	// whose answers an accepted Origin may read.
	CORSPaths []string
}

// What a cross-origin page may send and read. MCP's own headers are
// named by prefix: 2026-07-28 lets a tool define Mcp-Param-* headers.
var (
	corsHeaders = []string{"authorization", "content-type", "accept", "last-event-id"}
	corsExpose  = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After"
)

// Guard wraps h with DNS-rebinding protection.
func Guard(h http.Handler, o GuardOptions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, o.AllowedHosts) {
			http.Error(w, "Forbidden: Host not allowed", http.StatusForbidden)
			return
		}
		origin := r.Header.Get("Origin")
		if origin != "" && !originAllowed(origin, o.AllowedOrigins) {
			http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
			return
		}
		if origin != "" && corsPath(r.URL.Path, o.CORSPaths) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				preflight(w, r)
				return
			}
			w.Header().Set("Access-Control-Expose-Headers", corsExpose)
		}
		h.ServeHTTP(w, r)
	})
}

// preflight answers a CORS preflight: the methods MCP's transports use,
// and of the headers asked for those a client of them sends.
func preflight(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, v := range r.Header.Values("Access-Control-Request-Headers") {
		for _, name := range strings.Split(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if slices.Contains(corsHeaders, name) || strings.HasPrefix(name, "mcp-") {
				allowed = append(allowed, name)
			}
		}
	}
	w.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	if len(allowed) > 0 {
		w.Header().Set("Access-Control-Allow-Headers", strings.Join(allowed, ", "))
	}
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

func corsPath(path string, paths []string) bool {
	for _, p := range paths {
		if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
			return true
		}
	}
	return false
}

func hostAllowed(host string, extra []string) bool {
	if host == "" {
		return false
	}
	if slices.ContainsFunc(extra, func(a string) bool { return strings.EqualFold(a, host) }) {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	if slices.ContainsFunc(extra, func(a string) bool { return strings.EqualFold(a, name) }) {
		return true
	}
	return loopback.Host(name)
}

func originAllowed(origin string, extra []string) bool {
	if slices.ContainsFunc(extra, func(a string) bool { return strings.EqualFold(a, origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopback.Host(u.Hostname())
}
