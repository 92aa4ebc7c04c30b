// metrics.go wires the gateway's Prometheus metrics: the call middleware
// and the engine's gate that names entries, and gauges over the sessions,
// the rate buckets, the audit queue and the backends' states. It mounts the
// /metrics routes: to admins on the main address, and to anyone on an
// optional loopback-only one.

package gateway

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/observe/metrics"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/tick"
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
func (g *Gateway) watchGauges(st store.Store) {
	g.metrics.Sessions("streamable", g.streamable.Sessions)
	g.metrics.Sessions("legacy", g.legacy.Sessions)
	g.metrics.Sessions("stdio", func() int { return int(g.stdioSessions.Load()) })
	g.metrics.Streams("streamable", "2025", func() int { n, _ := g.streamable.Streams(); return n })
	g.metrics.Streams("streamable", "2026", func() int { _, n := g.streamable.Streams(); return n })
	g.metrics.Streams("legacy", "2025", g.legacy.Sessions) // one stream each
	g.metrics.Backends(g.backendStates)
	g.metrics.RateBuckets(g.gate.buckets)
	if g.pins != nil {
		g.metrics.Held(g.pins.heldCounts)
	}
	if st != nil {
		g.metrics.Reachable("store", st.Ping)
	}
	if g.cluster != nil {
		g.metrics.Reachable("redis", g.cluster.Ping)
	}
	if g.audit != nil {
		g.metrics.Audit(func() metrics.AuditStats {
			s := g.audit.Stats()
			return metrics.AuditStats{Queued: s.Queued, Written: s.Written, WriteErrors: s.WriteErrors,
				Lost: s.Lost, Unstorable: s.Unstorable, Refused: s.Refused, Blocked: s.Blocked}
		})
	}
}

// sampleEvery is how often the overview's history samples the gauges and
// the backends' states: its finest step.
const sampleEvery = 10 * time.Second

// sampleHistory samples the overview's history until ctx ends.
func (g *Gateway) sampleHistory(ctx context.Context) {
	g.metrics.Sample(time.Now(), g.backendStates())
	tick.Every(ctx, sampleEvery, func(now time.Time) bool {
		g.metrics.Sample(now, g.backendStates())
		return true
	})
}

// sessionRefused counts a session refused at a cap among the denials.
func (g *Gateway) sessionRefused(r *http.Request) {
	id, _ := mcp.IdentityFrom(r.Context())
	g.metrics.SessionRefused(id.Subject)
}

// MetricNames are the names of the metrics this gateway exports (see
// metrics.Names): what the shipped dashboard and alert rules are checked
// against.
func (g *Gateway) MetricNames() []string { return g.metrics.Names() }

// backendStates is every backend's state as the metrics show it, read
// from the Set at each scrape: backends added or removed while the
// gateway runs are followed exactly.
func (g *Gateway) backendStates() []metrics.BackendState {
	if g.backends == nil {
		return nil
	}
	states := g.backends.States()
	out := make([]metrics.BackendState, len(states))
	for i, s := range states {
		out[i] = metrics.BackendState{Name: s.Name, Up: s.Up, Restarts: s.Restarts, Since: s.Since,
			Starting: !s.Up && s.Restarts == 0 && s.LastError == ""}
	}
	return out
}

// adminOnly serves h to an authenticated admin (or a custom role mapped
// onto admin) and 403 to anyone else: metrics name every entry and role,
// which a viewer is not otherwise shown.
func (g *Gateway) adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := mcp.IdentityFrom(r.Context())
		if !ok || !g.roles.Allows(id.Role, policy.Admin) {
			// Say what would be allowed: an operator fixes the token,
			// not the URL. The role is one the configuration knows.
			role := id.Role
			if role == "" {
				role = "none"
			}
			http.Error(w, fmt.Sprintf("Forbidden: /metrics needs the admin role (or a role based on it); this credential's role is %s", role), http.StatusForbidden)
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
