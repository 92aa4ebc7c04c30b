// guard.go protects the HTTP transports from DNS rebinding: a page on an
// attacker's domain that resolves to 127.0.0.1 can make a browser talk to a
// local server, but it cannot forge the Host or Origin the browser sends.
// Seed 003's server reflected any Origin; this one refuses what it does not
// know with 403.

package mcphttp

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
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
}

// Guard wraps h with DNS-rebinding protection.
func Guard(h http.Handler, o GuardOptions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, o.AllowedHosts) {
			http.Error(w, "Forbidden: Host not allowed", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, o.AllowedOrigins) {
			http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
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
	return isLoopback(name)
}

func originAllowed(origin string, extra []string) bool {
	if slices.ContainsFunc(extra, func(a string) bool { return strings.EqualFold(a, origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopback(u.Hostname())
}

func isLoopback(name string) bool {
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}
