// audit.go exports the audit log's own counters (AuditStats) as metrics
// read at scrape time: a queue filling up, writes failing and records lost
// are what an operator alerts on before the audit trail has holes.

package metrics

import "github.com/prometheus/client_golang/prometheus"

// AuditStats are the audit log's counters, as the gateway reads them from
// its log: this package observes the engine and knows nothing of the log.
type AuditStats struct {
	Queued                                                   int64
	Written, WriteErrors, Lost, Unstorable, Refused, Blocked uint64
}

var (
	auditQueued      = prometheus.NewDesc("mcpgate_audit_queued", "Audit records accepted and not yet written.", nil, nil)
	auditWritten     = prometheus.NewDesc("mcpgate_audit_written_total", "Audit records written to the store.", nil, nil)
	auditWriteErrors = prometheus.NewDesc("mcpgate_audit_write_errors_total", "Failed audit writes (each is retried).", nil, nil)
	auditLost        = prometheus.NewDesc("mcpgate_audit_lost_total", "Audit records given up on at shutdown.", nil, nil)
	auditUnstorable  = prometheus.NewDesc("mcpgate_audit_unstorable_total", "Audit records the store refused for what they hold: logged, never written.", nil, nil)
	auditRefused     = prometheus.NewDesc("mcpgate_audit_refused_total", "Audit records refused because the log was closing.", nil, nil)
	auditBlocked     = prometheus.NewDesc("mcpgate_audit_blocked_total", "Calls that waited for room in a full audit queue.", nil, nil)
)

// auditCollector reads one snapshot of the log's counters per scrape, so
// that the values exported together are consistent with each other.
type auditCollector struct{ stats func() AuditStats }

func (auditCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{auditQueued, auditWritten, auditWriteErrors, auditLost, auditUnstorable, auditRefused, auditBlocked} {
		ch <- d
	}
}

func (c auditCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(auditQueued, prometheus.GaugeValue, float64(s.Queued))
	ch <- prometheus.MustNewConstMetric(auditWritten, prometheus.CounterValue, float64(s.Written))
	ch <- prometheus.MustNewConstMetric(auditWriteErrors, prometheus.CounterValue, float64(s.WriteErrors))
	ch <- prometheus.MustNewConstMetric(auditLost, prometheus.CounterValue, float64(s.Lost))
	ch <- prometheus.MustNewConstMetric(auditUnstorable, prometheus.CounterValue, float64(s.Unstorable))
	ch <- prometheus.MustNewConstMetric(auditRefused, prometheus.CounterValue, float64(s.Refused))
	ch <- prometheus.MustNewConstMetric(auditBlocked, prometheus.CounterValue, float64(s.Blocked))
}
