package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/observe/metrics"
)

// A backend's state, as the backends page names it.
func TestBackendStateIsUpStartingRestartingOrDown(t *testing.T) {
	for _, c := range []struct {
		b    BackendRow
		want string
	}{
		{BackendRow{Up: true}, "up"},
		{BackendRow{Up: true, Restarts: 3}, "up"},
		{BackendRow{Connecting: true}, "starting"},
		{BackendRow{Connecting: true, Restarts: 1, LastError: "exit status 1"}, "restarting"},
		{BackendRow{Restarts: 2, LastError: "connection refused"}, "down"},
		{BackendRow{LastError: "exit status 1"}, "down"},
	} {
		if got := stateOf(c.b); got != c.want {
			t.Errorf("%+v: %s, want %s", c.b, got, c.want)
		}
	}
}

// A chart scales to its highest value (at least its floor), draws one
// point a step, and breaks its line where a step has no value.
func TestChartScalesAndBreaksAtGaps(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	steps := []time.Time{t0, t0.Add(10 * time.Second), t0.Add(20 * time.Second), t0.Add(30 * time.Second)}
	c := newChart(720, 160, steps, 1, perSecond, series{"calls", "calls", []float64{0.5, 4, -1, 2}})
	if c.Max != "4/s" {
		t.Errorf("scale %q, want 4/s", c.Max)
	}
	if got := c.Lines[0].Path; got != "M0.0,140.5 L240.0,4.0 M720.0,82.0 h-6" {
		t.Errorf("path %q: want a line to the gap, then a lone point", got)
	}
	if quiet := newChart(720, 160, steps[:2], 1, perSecond, series{"calls", "calls", []float64{0, 0}}); quiet.Max != "1/s" {
		t.Errorf("a quiet range's scale %q, want 1/s", quiet.Max)
	}
}

// The busiest lists: by calls, or by denials (ties kept in the calls'
// order), the first topN only, and none without any.
func TestTopListsTheMostCallsOrDenials(t *testing.T) {
	ts := []metrics.Tally{{Name: "a", Calls: 9}, {Name: "b", Calls: 5, Denials: 1}, {Name: "c", Calls: 4, Denials: 3},
		{Name: "d", Calls: 3, Denials: 1}, {Name: "e", Calls: 2}, {Name: "f", Calls: 1}, {Name: "g", Denials: 2}}
	names := func(ts []metrics.Tally) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Name)
		}
		return strings.Join(s, ",")
	}
	if got := names(top(ts, false)); got != "a,b,c,d,e" {
		t.Errorf("by calls %s", got)
	}
	if got := names(top(ts, true)); got != "c,g,b,d" {
		t.Errorf("by denials %s", got)
	}
	if got := top(nil, true); len(got) != 0 {
		t.Errorf("of nothing %v", got)
	}
}

// Where a login may lead: a console path, never another site.
func TestLoginLeadsOnlyIntoTheConsole(t *testing.T) {
	for in, want := range map[string]string{
		"/admin/audit?entry=x":  "/admin/audit?entry=x",
		"":                      "/admin/",
		"https://evil.example/": "/admin/",
		"//evil.example/admin/": "/admin/",
		"/admin//evil.example":  "/admin/",
		"/admin/\\evil":         "/admin/",
		"/mcp":                  "/admin/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
