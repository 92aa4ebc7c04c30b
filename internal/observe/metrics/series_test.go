package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// valueOf is a counter's value.
func valueOf(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// A call finds its series again by its labels: it counts in the vector's
// own series, one series per set of labels, and finding it allocates
// nothing.
func TestACallCountsInItsLabelsSeries(t *testing.T) {
	m := New()
	ok := callLabels{"tool", "read", "files", "", "ok"}
	failed := ok
	failed.outcome = "error"
	for range 3 {
		m.call(ok).calls.Inc()
	}
	m.call(failed).calls.Inc()
	m.method("tools/call").Inc()
	m.method("tools/call").Inc()
	if got := valueOf(t, m.calls.WithLabelValues("tool", "read", "files", "", "ok")); got != 3 {
		t.Errorf("ok calls %v, want 3", got)
	}
	if got := valueOf(t, m.calls.WithLabelValues("tool", "read", "files", "", "error")); got != 1 {
		t.Errorf("failed calls %v, want 1", got)
	}
	if got := valueOf(t, m.requests.WithLabelValues("tools/call")); got != 2 {
		t.Errorf("requests %v, want 2", got)
	}
	if n := testing.AllocsPerRun(100, func() { m.call(ok).calls.Inc(); m.method("tools/call").Inc() }); n != 0 {
		t.Errorf("finding a call's series allocates %v times, want 0", n)
	}
}
