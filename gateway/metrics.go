// metrics.go wires the gateway's Prometheus metrics: the call middleware
// and the engine's gate that names entries, gauges over the sessions, the
// rate buckets and the audit queue, and the /metrics routes — to admins on
// the main address, and to anyone on an optional loopback-only one.

package gateway

import (
	"fmt"
	"net/http"

	"github.com/mcpgate/mcpgate/access"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// checkMetricsListen refuses a metrics address that is not loopback: that
// endpoint has no authentication, and the catalogue's names, the callers'
// roles and the traffic are not for the network to read.
func (g *Gateway) checkMetricsListen() error {
	if g.cfg.Metrics.Listen == "" {
		return nil
	}
	if err := auth.CheckLoopback(g.cfg.Metrics.Listen); err != nil {
		return fmt.Errorf("metrics.listen: the unauthenticated metrics endpoint may only listen on loopback: %w", err)
	}
	return nil
}

// watchGauges registers the gauges read at scrape time; it runs once the
// transports exist.
func (g *Gateway) watchGauges() {
	g.metrics.Sessions("streamable", g.streamable.Sessions)
	g.metrics.Sessions("legacy", g.legacy.Sessions)
	g.metrics.RateBuckets(g.gate.buckets)
	if g.audit != nil {
		g.metrics.Audit(g.audit.Stats)
	}
}

// adminOnly serves h to an authenticated admin (or a custom role mapped
// onto admin) and 403 to anyone else: metrics name every entry and role,
// which a viewer is not otherwise shown.
func (g *Gateway) adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := mcp.IdentityFrom(r.Context())
		if !ok || !g.roles.Allows(id.Role, access.Admin) {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// MetricsHandler serves /metrics without authentication, for the separate
// loopback address of metrics.listen (nil when it is not configured). It
// keeps the DNS-rebinding guard: a web page must not read it through a
// browser on the same machine.
func (g *Gateway) MetricsHandler() http.Handler {
	if g.cfg.Metrics.Listen == "" {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", g.metrics.Handler())
	return mcphttp.Guard(mux, mcphttp.GuardOptions{})
}
