// overview.go draws the overview's charts from the gateway's in-process
// history (metrics.History): calls and errors, latency percentiles,
// denials by reason, sessions and streams, and each backend's latency and
// up/down strip. Each is an SVG the gateway writes, read without
// JavaScript; a script only fetches the charts again every ten seconds.

package admin

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/observe/metrics"
)

// Chart sizes, in the SVG's own units.
const (
	chartWidth  = 720
	chartHeight = 200
	sparkWidth  = 240
	sparkHeight = 36
	stripHeight = 14
)

// line is one series of a chart: its class (its colour), its legend and
// its SVG path; a step without a value breaks the line.
type line struct {
	Class, Label, Path string
}

// chart is lines over the same steps, scaled to the highest value.
type chart struct {
	Width, Height int
	Mid           int    // half the scale's height, for its middle line
	Max           string // the top of the scale, in the chart's unit
	Lines         []line
	From, To      time.Time
}

// series is what a line is drawn from; a negative value is no value.
type series struct {
	class, label string
	values       []float64
}

// newChart draws the series, each value scaled by scale for the legend's
// unit, over a scale from zero to the highest value (at least floor).
func newChart(width, height int, steps []time.Time, floor float64, unit func(float64) string, ss ...series) chart {
	c := chart{Width: width, Height: height, Mid: height/2 + 2}
	top := floor
	for _, s := range ss {
		for _, v := range s.values {
			top = math.Max(top, v)
		}
	}
	step := float64(width) / float64(max(len(steps)-1, 1))
	for _, s := range ss {
		var b strings.Builder
		pen := false
		for i, v := range s.values {
			if v < 0 {
				pen = false
				continue
			}
			x, y := float64(i)*step, float64(height)-v/top*float64(height-4)
			if pen {
				fmt.Fprintf(&b, "L%.1f,%.1f ", x, y)
			} else {
				fmt.Fprintf(&b, "M%.1f,%.1f ", x, y)
				if i == len(s.values)-1 || s.values[i+1] < 0 { // a lone point still shows, within the chart
					if i > 0 {
						b.WriteString("h-6 ")
					} else {
						b.WriteString("h6 ")
					}
				}
			}
			pen = true
		}
		c.Lines = append(c.Lines, line{Class: s.class, Label: s.label, Path: strings.TrimSpace(b.String())})
	}
	c.Max = unit(top)
	if len(steps) > 0 {
		c.From, c.To = steps[0], steps[len(steps)-1]
	}
	return c
}

func perSecond(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) + "/s" }
func plain(v float64) string     { return strconv.FormatFloat(v, 'g', 3, 64) }

// millis writes seconds as milliseconds, "—" for no value.
func millis(seconds float64) string {
	if seconds < 0 {
		return "—"
	}
	ms := seconds * 1000
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

// inMillis is a series of seconds as milliseconds, keeping gaps.
func inMillis(seconds []float64) []float64 {
	out := make([]float64, len(seconds))
	for i, s := range seconds {
		out[i] = s
		if s >= 0 {
			out[i] = s * 1000
		}
	}
	return out
}

func msUnit(v float64) string { return millis(v / 1000) }

// overviewCharts is everything the overview draws of one range.
type overviewCharts struct {
	Range                   metrics.Range
	Ranges                  []metrics.Range
	Calls, Latency, Denials chart
	Sessions                chart
	TotalCalls, TotalErrors uint64
	P50, P99                string
	DenialTotals            []denialTotal
	Backends                []backendLine
	Gauges                  []gaugeNow
	TopCalls, TopDenials    []metrics.Tally // principals
	TopEntries, TopDenied   []metrics.Tally // entries
	StepSeconds             int
}

type denialTotal struct {
	Reason string
	N      uint64
}

type gaugeNow struct {
	Name   string
	Latest int
}

// backendLine is one backend's sparkline of latency and its strip.
type backendLine struct {
	Name          string
	Calls, Errors uint64
	P99           string
	Spark         chart
	Strip         []stripCell
	Restarts      int
}

// stripCell is one step of a backend's strip: a rectangle of the state's
// class, with a mark when the backend restarted in it.
type stripCell struct {
	X, W     float64
	State    string
	Restarts int
	At       time.Time
}

// topN is how many principals and entries each list shows.
const topN = 5

// reasonClass is the colour of each denial reason's line.
var reasonClass = map[string]string{
	metrics.DeniedRole: "s1", metrics.DeniedPolicy: "s2", metrics.DeniedInterceptor: "s3",
	metrics.DeniedRate: "s4", metrics.DeniedSessionCap: "s5",
}

func newOverviewCharts(h metrics.History) overviewCharts {
	o := overviewCharts{Range: h.Range, Ranges: metrics.Ranges, TotalCalls: h.TotalCalls, TotalErrors: h.TotalErrors,
		P50: millis(h.TotalP50), P99: millis(h.TotalP99), StepSeconds: int(h.Range.Step.Seconds())}
	o.Calls = newChart(chartWidth, chartHeight, h.Steps, 1, perSecond,
		series{"calls", "calls", h.Calls}, series{"errors", "errors", h.Errors})
	o.Latency = newChart(chartWidth, chartHeight, h.Steps, 1, msUnit,
		series{"p50", "p50", inMillis(h.P50)}, series{"p99", "p99", inMillis(h.P99)})
	var denials []series
	for k, reason := range metrics.DenialReasons {
		denials = append(denials, series{reasonClass[reason], reason, h.Denials[k]})
		o.DenialTotals = append(o.DenialTotals, denialTotal{reason, h.DenialTotals[k]})
	}
	o.Denials = newChart(chartWidth, chartHeight, h.Steps, 1, plain, denials...)
	var gauges []series
	for k, g := range h.Gauges {
		gauges = append(gauges, series{"s" + strconv.Itoa(k%5+1), g.Name, g.Values})
		o.Gauges = append(o.Gauges, gaugeNow{g.Name, max(g.Latest, 0)})
	}
	o.Sessions = newChart(chartWidth, chartHeight, h.Steps, 1, plain, gauges...)
	for _, b := range h.Backends {
		o.Backends = append(o.Backends, newBackendLine(h.Steps, b))
	}
	o.TopCalls, o.TopDenials = top(h.Principals, false), top(h.Principals, true)
	o.TopEntries, o.TopDenied = top(h.Entries, false), top(h.Entries, true)
	return o
}

func newBackendLine(steps []time.Time, b metrics.BackendHistory) backendLine {
	l := backendLine{Name: b.Name, Calls: b.Calls, Errors: b.Errors, P99: millis(b.TotalP99),
		Spark: newChart(sparkWidth, sparkHeight, steps, 1, msUnit,
			series{"p50", "p50", inMillis(b.P50)}, series{"p99", "p99", inMillis(b.P99)})}
	w := float64(chartWidth) / float64(max(len(steps), 1))
	for i, s := range b.State {
		if s == "" && b.Restarts[i] == 0 {
			continue
		}
		l.Strip = append(l.Strip, stripCell{X: float64(i) * w, W: w, State: s, Restarts: b.Restarts[i], At: steps[i]})
		l.Restarts += b.Restarts[i]
	}
	return l
}

// top is the first topN of tallies with calls (or denials), most first.
func top(ts []metrics.Tally, byDenials bool) []metrics.Tally {
	var out []metrics.Tally
	for _, t := range ts {
		if byDenials && t.Denials > 0 || !byDenials && t.Calls > 0 {
			out = append(out, t)
		}
	}
	if byDenials {
		// ts is by calls: a stable sort keeps that as the ties' order.
		slices.SortStableFunc(out, func(a, b metrics.Tally) int { return cmp.Compare(b.Denials, a.Denials) })
	}
	return out[:min(len(out), topN)]
}

// overviewRange is the range a request asks for (?range=15m|1h|6h).
func overviewRange(r *http.Request) metrics.Range {
	return metrics.RangeNamed(r.URL.Query().Get("range"))
}
