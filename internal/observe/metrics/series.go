// series.go keeps what the admin console charts. Gated calls and errors
// (every outcome but ok) are counted per ten seconds over the last hour, in
// a ring of buckets written by the observer. Each backend's calls, errors
// and mean time to answer are read back from the registry's own counters.

package metrics

import (
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// SeriesStep is the width of one bucket of the series; SeriesSpan how far
// back it reaches.
const (
	SeriesStep = 10 * time.Second
	SeriesSpan = time.Hour
)

const seriesLen = int(SeriesSpan / SeriesStep)

// series is a ring of per-step counts.
type series struct {
	mu    sync.Mutex
	epoch [seriesLen]int64 // the step each bucket counts (unix time / step)
	calls [seriesLen]uint32
	errs  [seriesLen]uint32
}

func (s *series) add(now time.Time, isErr bool) {
	step := now.UnixNano() / int64(SeriesStep)
	i := int(step % int64(seriesLen))
	s.mu.Lock()
	if s.epoch[i] != step {
		s.epoch[i], s.calls[i], s.errs[i] = step, 0, 0
	}
	s.calls[i]++
	if isErr {
		s.errs[i]++
	}
	s.mu.Unlock()
}

// Point is one step of the series: its start, and the calls and errors a
// second over it.
type Point struct {
	At            time.Time
	Calls, Errors float64
}

// Series is the last hour of gated calls, oldest step first, up to the
// step that holds now (which is still filling).
func (m *Metrics) Series(now time.Time) []Point {
	s := &m.series
	last := now.UnixNano() / int64(SeriesStep)
	out := make([]Point, seriesLen)
	per := SeriesStep.Seconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range seriesLen {
		step := last - int64(seriesLen-1-k)
		p := Point{At: time.Unix(0, step*int64(SeriesStep)).UTC()}
		if i := int(step % int64(seriesLen)); s.epoch[i] == step {
			p.Calls, p.Errors = float64(s.calls[i])/per, float64(s.errs[i])/per
		}
		out[k] = p
	}
	return out
}

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
