// Package metrics is mcpgate's Prometheus instrumentation. A Metrics owns
// its own registry, with no global state, so two gateways in one process
// (or one test binary) never share a counter. An mcp.Observer records every
// method call and every gated call's outcome. Gauge functions read the
// queues and limits that already count themselves, only when scraped:
// sessions, rate buckets, the audit log, the backends' states, the span
// exporter.
//
// Labels are bounded by construction. A method or entry name is recorded
// only when the engine knows it, and an error code only among the first
// maxCodes seen. Nothing a caller sent as an argument or credential is ever
// a label.
package metrics

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// durationBounds span a cached native answer (100µs) to a slow backend
// at its timeout (30s): the histogram's buckets, and the history's.
var durationBounds = [...]float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
}

// Metrics is one gateway's set of metrics and the registry serving them.
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec   // method
	calls       *prometheus.CounterVec   // kind, name, backend, origin, outcome
	callErrors  *prometheus.CounterVec   // code
	duration    *prometheus.HistogramVec // kind, backend, name
	denials     *prometheus.CounterVec   // reason
	rateLimited *prometheus.CounterVec   // role
	changes     *prometheus.CounterVec   // backend, kind
	intercepted *prometheus.CounterVec   // interceptor, outcome
	redacted    *prometheus.CounterVec   // pattern

	codes *codeSet
	// history is what the console's overview draws (history.go).
	history history
}

// New returns a Metrics with every call metric registered (and at zero
// until the first call), plus the Go runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_requests_total",
			Help: "MCP requests served, by method (\"unknown\" for a method the engine does not serve).",
		}, []string{"method"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_calls_total",
			Help: "Gated calls (tools/call, resources/read, prompts/get) by entry kind, name, backend, the backend's own name where the gateway renamed it (origin), and outcome.",
		}, []string{"kind", "name", "backend", "origin", "outcome"}),
		callErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_call_errors_total",
			Help: "Gated calls answered with a JSON-RPC error, by error code.",
		}, []string{"code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpgate_call_duration_seconds",
			Help:    "Time to answer a gated call, refusals included, by entry kind, backend and entry name (as mcpgate_calls_total names it).",
			Buckets: durationBounds[:],
		}, []string{"kind", "backend", "name"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_denials_total",
			Help: "Calls and sessions refused, by reason: role (the entry is not the caller's role's), policy (a policy rule), interceptor (a hook), rate (a rate limit), session_cap (a session past a cap).",
		}, []string{"reason"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_rate_limited_total",
			Help: "Gated calls refused by a rate limit, by the caller's role.",
		}, []string{"role"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_definition_changes_total",
			Help: "Tool and prompt definitions a backend changed from the approved one (catalogue.pinning), counted once each, by backend and kind.",
		}, []string{"backend", "kind"}),
		intercepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_interceptor_calls_total",
			Help: "Interceptor calls by interceptor and outcome: allow, deny, mutate, redact, error_open (it failed; the call went on), error_closed (it failed; the call was refused).",
		}, []string{"interceptor", "outcome"}),
		redacted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_redactions_total",
			Help: "Secrets the redactor replaced in answers, by pattern.",
		}, []string{"pattern"}),
		codes: newCodeSet(maxCodes),
	}
	for _, r := range DenialReasons {
		m.denials.WithLabelValues(r) // at zero from the start, for rate() and alerts
	}
	m.history.init()
	m.reg.MustRegister(m.requests, m.calls, m.callErrors, m.duration, m.denials, m.rateLimited, m.changes, m.intercepted, m.redacted,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// DefinitionChanged counts a definition a backend changed from the one
// approved.
func (m *Metrics) DefinitionChanged(backend, kind string) {
	m.changes.WithLabelValues(label(backend), kind).Inc()
}

// Intercepted counts one call of an interceptor, by its outcome.
func (m *Metrics) Intercepted(interceptor, outcome string) {
	m.intercepted.WithLabelValues(label(interceptor), outcome).Inc()
}

// Redacted counts n secrets of pattern replaced.
func (m *Metrics) Redacted(pattern string, n int) {
	m.redacted.WithLabelValues(label(pattern)).Add(float64(n))
}

// Names are the names of every metric the registry exports, sorted: what
// a dashboard or an alert rule may name (a histogram's series add
// _bucket, _sum and _count).
func (m *Metrics) Names() []string {
	ch := make(chan *prometheus.Desc)
	go func() { m.reg.Describe(ch); close(ch) }()
	var out []string
	for d := range ch {
		// A Desc shows its name only in its String.
		if n := fqName.FindStringSubmatch(d.String()); n != nil && !slices.Contains(out, n[1]) {
			out = append(out, n[1])
		}
	}
	slices.Sort(out)
	return out
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// Handler serves the registry in the Prometheus exposition format. It
// checks nothing: the caller puts it behind authentication or on a
// loopback address.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Sessions reports, when scraped, the open sessions of one transport
// ("streamable", "legacy") as mcpgate_sessions_open{transport}. The
// overview's history samples them too.
func (m *Metrics) Sessions(transport string, open func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "mcpgate_sessions_open",
		Help:        "Open MCP sessions, by transport.",
		ConstLabels: prometheus.Labels{"transport": transport},
	}, func() float64 { return float64(open()) }))
	m.history.gauge(transport+" sessions", open)
}

// Streams reports, when scraped, the event streams open on one transport
// for one era ("2025", "2026") as mcpgate_streams_open{transport,era}.
// The overview's history samples them too.
func (m *Metrics) Streams(transport, era string, open func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "mcpgate_streams_open",
		Help:        "Open event streams (SSE) by transport and protocol era: a 2025 session's, or a sessionless 2026-07-28 request's.",
		ConstLabels: prometheus.Labels{"transport": transport, "era": era},
	}, func() float64 { return float64(open()) }))
	m.history.gauge(transport+" streams ("+era+")", open)
}

// SessionRefused counts a session refused at a cap, by whom.
func (m *Metrics) SessionRefused(principal string) {
	m.denials.WithLabelValues(DeniedSessionCap).Inc()
	m.history.denied(time.Now(), principal, DeniedSessionCap)
}

// Held reports, when scraped, the definitions held until someone approves
// them, by backend (catalogue.pinning enforce), as
// mcpgate_definitions_held.
func (m *Metrics) Held(held func() map[string]int) {
	m.reg.MustRegister(heldCollector{held})
}

// Reachable reports, when scraped, whether a dependency the replicas share
// answers a ping within pingTimeout, as
// mcpgate_dependency_up{dependency}.
func (m *Metrics) Reachable(dependency string, ping func(context.Context) error) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "mcpgate_dependency_up",
		Help:        "1 when a dependency (store: the database; redis) answered a ping at this scrape, 0 when it did not.",
		ConstLabels: prometheus.Labels{"dependency": dependency},
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		defer cancel()
		if ping(ctx) != nil {
			return 0
		}
		return 1
	}))
}

// pingTimeout bounds a scrape's ping of a dependency: well under a
// scrape's own timeout.
const pingTimeout = 2 * time.Second

var definitionsHeld = prometheus.NewDesc("mcpgate_definitions_held",
	"Definitions a backend changed that are held until an admin approves them (catalogue.pinning: enforce), by backend.",
	[]string{"backend"}, nil)

type heldCollector struct{ held func() map[string]int }

func (heldCollector) Describe(ch chan<- *prometheus.Desc) { ch <- definitionsHeld }

func (c heldCollector) Collect(ch chan<- prometheus.Metric) {
	seen := onceEach{}
	for b, n := range c.held() {
		if name, first := seen.first(b); first {
			ch <- prometheus.MustNewConstMetric(definitionsHeld, prometheus.GaugeValue, float64(n), name)
		}
	}
}

// RateBuckets reports, when scraped, the rate limiter's live buckets as
// mcpgate_rate_buckets: its memory, which grows with distinct callers.
func (m *Metrics) RateBuckets(n func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcpgate_rate_buckets",
		Help: "Rate-limit buckets held (one per identity, and per entry where a rule asks).",
	}, func() float64 { return float64(n()) }))
}

// Audit reports, when scraped, the audit log's queue and failures.
func (m *Metrics) Audit(stats func() AuditStats) {
	m.reg.MustRegister(auditCollector{stats: stats})
}
