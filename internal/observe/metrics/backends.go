// backends.go exports each backend's state — up or down, since when, and
// how often it was restarted — read from the backends themselves at
// scrape time. Nothing is counted twice or kept: a backend added at run
// time appears at the next scrape, and one removed leaves no series
// behind.

package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	backendUp = prometheus.NewDesc("mcpgate_backend_up",
		"1 when the backend is connected and its entries are in the catalogue, 0 when it is down.",
		[]string{"backend"}, nil)
	backendRestarts = prometheus.NewDesc("mcpgate_backend_restarts_total",
		"Connection attempts after the first, by backend (from zero again when the backend is re-added).",
		[]string{"backend"}, nil)
	backendSince = prometheus.NewDesc("mcpgate_backend_state_since_seconds",
		"Unix time at which the backend last went up or down (or was added).",
		[]string{"backend"}, nil)
)

// BackendState is what the metrics show of one backend.
type BackendState struct {
	Name     string
	Up       bool
	Restarts int
	Since    time.Time
	// Starting: it was never up and nothing failed yet (the overview's
	// strip leaves such a step blank rather than down).
	Starting bool
}

// backendCollector reads the current backends per scrape.
type backendCollector struct{ states func() []BackendState }

func (backendCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backendUp
	ch <- backendRestarts
	ch <- backendSince
}

func (c backendCollector) Collect(ch chan<- prometheus.Metric) {
	seen := onceEach{}
	for _, s := range c.states() {
		name, first := seen.first(s.Name)
		if !first {
			continue
		}
		up := 0.0
		if s.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(backendUp, prometheus.GaugeValue, up, name)
		ch <- prometheus.MustNewConstMetric(backendRestarts, prometheus.CounterValue, float64(s.Restarts), name)
		if !s.Since.IsZero() {
			ch <- prometheus.MustNewConstMetric(backendSince, prometheus.GaugeValue, float64(s.Since.UnixNano())/1e9, name)
		}
	}
}

// Backends reports, when scraped, the state of every backend states
// returns then: mcpgate_backend_up, mcpgate_backend_restarts_total and
// mcpgate_backend_state_since_seconds, each by backend name.
func (m *Metrics) Backends(states func() []BackendState) {
	m.reg.MustRegister(backendCollector{states: states})
}
