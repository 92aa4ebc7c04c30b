// calls.go reads back, for the console's backends table, what the registry
// has counted of each backend's gated calls since the gateway started.

package metrics

import dto "github.com/prometheus/client_model/go"

// BackendCalls is what the registry has counted of one backend's gated
// calls since the gateway started.
type BackendCalls struct {
	Calls, Errors float64
	// MeanSeconds is the mean time to answer (0 with no call).
	MeanSeconds float64
}

// BackendCallStats reads each backend's calls, errors and mean duration from the
// registry's counters, by backend label ("" for the gateway's own).
func (m *Metrics) BackendCallStats() map[string]BackendCalls {
	out := map[string]BackendCalls{}
	families, err := m.reg.Gather()
	if err != nil {
		return out
	}
	labelOf := func(ms *dto.Metric, name string) string {
		for _, l := range ms.GetLabel() {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	sums := map[string][2]float64{}
	for _, f := range families {
		switch f.GetName() {
		case "mcpgate_calls_total":
			for _, ms := range f.GetMetric() {
				b := labelOf(ms, "backend")
				c := out[b]
				v := ms.GetCounter().GetValue()
				c.Calls += v
				if labelOf(ms, "outcome") != "ok" {
					c.Errors += v
				}
				out[b] = c
			}
		case "mcpgate_call_duration_seconds":
			for _, ms := range f.GetMetric() {
				b := labelOf(ms, "backend")
				s := sums[b]
				s[0] += ms.GetHistogram().GetSampleSum()
				s[1] += float64(ms.GetHistogram().GetSampleCount())
				sums[b] = s
			}
		}
	}
	for b, s := range sums {
		if s[1] > 0 {
			c := out[b]
			c.MeanSeconds = s[0] / s[1]
			out[b] = c
		}
	}
	return out
}
