package metrics

import (
	"testing"
	"time"
)

// The series counts per step and forgets a step once the ring comes
// round to it again: an hour later, an old bucket reads zero.
func TestSeriesCountsPerStepOverTheLastHour(t *testing.T) {
	m := New()
	t0 := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	for range 20 {
		m.series.add(t0, false)
	}
	for range 5 {
		m.series.add(t0.Add(SeriesStep), true)
	}
	pts := m.Series(t0.Add(SeriesStep))
	if len(pts) != int(SeriesSpan/SeriesStep) {
		t.Fatalf("%d points", len(pts))
	}
	last, prev := pts[len(pts)-1], pts[len(pts)-2]
	if !prev.At.Equal(t0) || prev.Calls != 2 || prev.Errors != 0 || last.Calls != 0.5 || last.Errors != 0.5 {
		t.Errorf("points %+v %+v, want 2/s at %v then 0.5/s of errors", prev, last, t0)
	}
	later := m.Series(t0.Add(SeriesSpan + SeriesStep))
	for _, p := range later {
		if p.Calls != 0 || p.Errors != 0 {
			t.Fatalf("an hour later a point still counts: %+v", p)
		}
	}
	// A call an hour later reuses the bucket of t0 and counts alone.
	m.series.add(t0.Add(SeriesSpan), false)
	if p := m.Series(t0.Add(SeriesSpan))[int(SeriesSpan/SeriesStep)-1]; p.Calls != 0.1 {
		t.Errorf("the reused bucket reads %+v, want one call", p)
	}
}
