// tracing.go exports the span exporter's counts, read at scrape time: a
// collector that refuses or cannot be reached shows as spans failing,
// which an operator alerts on before the traces have holes.

package metrics

import "github.com/prometheus/client_golang/prometheus"

// Spans reports, when scraped, the spans exported to the tracing
// collector and those dropped because an export failed.
func (m *Metrics) Spans(stats func() (exported, failed uint64)) {
	exported := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "mcpgate_trace_spans_exported_total",
		Help: "Spans the tracing collector accepted.",
	}, func() float64 { e, _ := stats(); return float64(e) })
	failed := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "mcpgate_trace_spans_failed_total",
		Help: "Spans dropped because an export to the tracing collector failed.",
	}, func() float64 { _, f := stats(); return float64(f) })
	m.reg.MustRegister(exported, failed)
}
