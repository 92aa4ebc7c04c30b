package admin

import (
	"strings"
	"testing"
	"time"
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

// The chart scales to its highest point (at least 1/s), draws one point
// a step, and counts the calls back from the rates.
func TestChartScalesAndCounts(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	pts := []ChartPoint{{At: t0, Calls: 0.5}, {At: t0.Add(10 * time.Second), Calls: 4, Errors: 2}, {At: t0.Add(20 * time.Second)}}
	c := newChart(pts)
	if c.Max != "4" || c.TotalCalls != "45" || c.TotalErrors != "20" {
		t.Errorf("chart %+v", c)
	}
	if got := strings.Fields(c.Calls); len(got) != 3 || got[1] != "360.0,4.0" || got[2] != "720.0,160.0" {
		t.Errorf("calls line %q", c.Calls)
	}
	if quiet := newChart([]ChartPoint{{At: t0}, {At: t0.Add(10 * time.Second)}}); quiet.Max != "1" {
		t.Errorf("a quiet hour's scale %q, want 1", quiet.Max)
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
