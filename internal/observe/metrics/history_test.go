package metrics

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

var t0 = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)

// The history counts per step and forgets a step once its ring comes
// round to it again: an hour later, an old fine step reads zero, while
// the coarse ring still holds it for the six-hour range.
func TestHistoryCountsPerStepAndForgetsWhenTheRingComesRound(t *testing.T) {
	m := New()
	for range 20 {
		m.history.call(t0, "files", "alice", "read", time.Millisecond, false, "")
	}
	for range 5 {
		m.history.call(t0.Add(10*time.Second), "files", "alice", "read", time.Millisecond, true, "")
	}
	h := m.History(t0.Add(10*time.Second), RangeNamed("1h"))
	if len(h.Steps) != 360 {
		t.Fatalf("%d steps in an hour, want 360", len(h.Steps))
	}
	n := len(h.Steps)
	if !h.Steps[n-2].Equal(t0) || h.Calls[n-2] != 2 || h.Errors[n-2] != 0 || h.Calls[n-1] != 0.5 || h.Errors[n-1] != 0.5 {
		t.Errorf("steps %v %v/%v then %v/%v, want 2/s at %v then 0.5/s of errors", h.Steps[n-2], h.Calls[n-2], h.Errors[n-2], h.Calls[n-1], h.Errors[n-1], t0)
	}
	if h.TotalCalls != 25 || h.TotalErrors != 5 {
		t.Errorf("totals %d/%d, want 25/5", h.TotalCalls, h.TotalErrors)
	}
	if q := RangeNamed("15m"); len(m.History(t0, q).Steps) != 90 {
		t.Errorf("15m has %d steps, want 90", len(m.History(t0, q).Steps))
	}
	later := t0.Add(time.Hour + 10*time.Second)
	for _, c := range m.History(later, RangeNamed("1h")).Calls {
		if c != 0 {
			t.Fatal("an hour later a fine step still counts")
		}
	}
	six := m.History(later, RangeNamed("6h"))
	if len(six.Steps) != 360 || six.TotalCalls != 25 || six.Range.Step != time.Minute {
		t.Errorf("6h: %d steps of %v, %d calls, want 360 of a minute holding the 25", len(six.Steps), six.Range.Step, six.TotalCalls)
	}
	if m.History(t0.Add(7*time.Hour), RangeNamed("6h")).TotalCalls != 0 {
		t.Error("seven hours later the six-hour range still counts")
	}
	if RangeNamed("nonsense").Name != "1h" {
		t.Error("an unknown range is not the default")
	}
}

// Percentiles come from the step's histogram, interpolated within a
// bucket as Prometheus's histogram_quantile does; a step without calls
// has none (-1).
func TestHistoryPercentilesInterpolateWithinBuckets(t *testing.T) {
	var c cell
	if c.quantile(0.5) != -1 {
		t.Fatal("an empty step has a percentile")
	}
	// 90 calls in (1ms, 2.5ms], 10 in (0.5s, 1s].
	for range 90 {
		c.add(2*time.Millisecond, false)
	}
	for range 10 {
		c.add(700*time.Millisecond, false)
	}
	if p := c.quantile(0.5); p < 0.00183 || p > 0.00184 { // 1ms + 1.5ms × 50/90
		t.Errorf("p50 = %v, want about 1.83ms", p)
	}
	if p := c.quantile(0.99); p < 0.949 || p > 0.951 { // 0.5s + 0.5s × 9/10
		t.Errorf("p99 = %v, want 0.95s", p)
	}
	var slow cell
	slow.add(time.Minute, false)
	if p := slow.quantile(0.99); p != 30 {
		t.Errorf("past the last bound p99 = %v, want the last bound (30s)", p)
	}
}

// A refusal is counted under its reason: a policy rule or an interceptor
// names itself, any other forbidden call is the role's, a rate limit the
// rate's; a session refused at its cap is counted without a call.
func TestDenialsAreCountedByReason(t *testing.T) {
	policyRule, hook := &mcp.Request{}, &mcp.Request{}
	policyRule.SetDeniedBy("docs-only")
	hook.SetDeniedBy(mcp.DeniedByInterceptor + "dlp")
	for _, c := range []struct {
		r    *mcp.Request
		o    mcp.Outcome
		want string
	}{
		{&mcp.Request{}, mcp.OutcomeForbidden, DeniedRole},
		{policyRule, mcp.OutcomeForbidden, DeniedPolicy},
		{hook, mcp.OutcomeForbidden, DeniedInterceptor},
		{&mcp.Request{}, mcp.OutcomeRateLimited, DeniedRate},
		{&mcp.Request{}, mcp.OutcomeOK, ""},
		{&mcp.Request{}, mcp.OutcomeError, ""},
	} {
		if got := denial(c.r, c.o); got != c.want {
			t.Errorf("%s by %q: %q, want %q", c.o, c.r.DeniedBy(), got, c.want)
		}
	}
	m := New()
	m.history.call(t0, "files", "mallory", "read", time.Millisecond, true, DeniedPolicy)
	m.history.call(t0, "files", "mallory", "read", time.Millisecond, true, DeniedPolicy)
	m.history.call(t0, "files", "alice", "read", time.Millisecond, false, "")
	m.history.call(t0, "files", "alice", "list", time.Millisecond, false, "")
	m.history.call(t0, "files", "alice", "list", time.Millisecond, false, "")
	m.history.denied(t0, "bob", DeniedSessionCap)
	h := m.History(t0, RangeNamed("15m"))
	if h.DenialTotals[1] != 2 || h.DenialTotals[4] != 1 || h.Denials[1][len(h.Steps)-1] != 2 {
		t.Errorf("denial totals %v, want 2 for policy and 1 for session_cap", h.DenialTotals)
	}
	if got := fmt.Sprint(h.Principals); got != "[{alice 3 0} {mallory 2 2} {bob 0 1}]" {
		t.Errorf("principals %s", got)
	}
	if got := fmt.Sprint(h.Entries); got != "[{read 3 2} {list 2 0}]" {
		t.Errorf("entries %s", got)
	}
}

// One minute keeps at most tallyKeys principals; the others are counted
// together, so that a flood of new names costs no memory.
func TestTalliesAreBoundedPerMinute(t *testing.T) {
	m := New()
	for i := range 100 {
		m.history.call(t0, "b", fmt.Sprint("p", i), "e", time.Millisecond, false, "")
	}
	h := m.History(t0, RangeNamed("15m"))
	if len(h.Principals) != tallyKeys+1 || h.Principals[0].Name != others || h.Principals[0].Calls != 100-tallyKeys {
		t.Errorf("%d principals, first %+v: want %d and the others together", len(h.Principals), h.Principals[0], tallyKeys+1)
	}
}

// Each backend's strip says up, down, or flap (both in one step), with
// its restarts, and nothing while the backend starts; a backend gone longer than the history reaches is
// forgotten.
func TestBackendStripsFollowTheSampledStates(t *testing.T) {
	m := New()
	m.Sample(t0.Add(-10*time.Second), []BackendState{{Name: "files", Starting: true}})
	m.Sample(t0, []BackendState{{Name: "files", Up: true}})
	m.Sample(t0.Add(10*time.Second), []BackendState{{Name: "files", Up: false, Restarts: 1}})
	m.Sample(t0.Add(12*time.Second), []BackendState{{Name: "files", Up: true, Restarts: 2}})
	m.Sample(t0.Add(20*time.Second), []BackendState{{Name: "files", Up: false, Restarts: 2}})
	h := m.History(t0.Add(30*time.Second), RangeNamed("15m"))
	if len(h.Backends) != 1 {
		t.Fatalf("%d backends", len(h.Backends))
	}
	b, n := h.Backends[0], len(h.Steps)
	if got := fmt.Sprint(b.State[n-5:], b.Restarts[n-5:]); got != "[ up flap down ] [0 0 2 0 0]" {
		t.Errorf("strip %s", got)
	}
	m.Sample(t0.Add(7*time.Hour), nil)
	if len(m.History(t0.Add(7*time.Hour), RangeNamed("15m")).Backends) != 0 {
		t.Error("a backend gone seven hours is still drawn")
	}
}

// Gauges are sampled as the most seen in each step.
func TestGaugesKeepTheMostSeenInAStep(t *testing.T) {
	m := New()
	v := 3
	m.Sessions("streamable", func() int { return v })
	m.Sample(t0, nil)
	v = 7
	m.Sample(t0.Add(time.Second), nil)
	v = 1
	m.Sample(t0.Add(2*time.Second), nil)
	g := m.History(t0.Add(2*time.Second), RangeNamed("15m")).Gauges[0]
	if g.Name != "streamable sessions" || g.Values[len(g.Values)-1] != 7 || g.Values[0] != -1 || g.Latest != 7 {
		t.Errorf("gauge %s latest %d, last %v first %v: want 7, and -1 where never sampled", g.Name, g.Latest, g.Values[len(g.Values)-1], g.Values[0])
	}
}

// historyBudget is the most the history may hold, full, for the gateway
// and 10 backends, whatever the traffic: every step written, every
// minute's tallies full with long names.
const historyBudget = 4 << 20

// The memory is the rings' and the tallies', fixed: six hours at 1,000
// calls a second cost what this fill costs, since a step's counts do not
// grow with its calls.
func TestHistoryMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("fills six hours")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := New()
	long := func(kind string, i int) string { return fmt.Sprintf("%s-%04d-%s", kind, i, string(make([]byte, 40))) }
	for s := range 6 * 360 { // every ten seconds for six hours
		now := t0.Add(time.Duration(s) * 10 * time.Second)
		for i := range 10 {
			m.history.call(now, fmt.Sprint("backend-", i), long("p", s*10+i), long("e", s*10+i), time.Duration(i)*time.Millisecond, i == 0, DeniedRole)
		}
		for i := range 10 {
			m.history.call(now, fmt.Sprint("backend-", i), long("p", 5000+s*10+i), long("e", 5000+s*10+i), time.Millisecond, false, "")
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("the history, full (6 h, the gateway and 10 backends, %d principals and entries a minute): %d KiB", tallyKeys, held>>10)
	if held > historyBudget {
		t.Errorf("the history holds %d KiB, over its budget of %d KiB", held>>10, historyBudget>>10)
	}
	runtime.KeepAlive(m)
}

// The cost of recording one call, under the lock.
func BenchmarkHistoryCall(b *testing.B) {
	m := New()
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		m.history.call(now, "files", "alice", "read", time.Millisecond, false, "")
	}
}

// Names lists what the registry exports, the gauges registered later
// included, each once.
func TestNamesListEveryRegisteredMetric(t *testing.T) {
	m := New()
	m.Sessions("streamable", func() int { return 0 })
	m.Sessions("legacy", func() int { return 0 })
	names := m.Names()
	for _, want := range []string{"mcpgate_calls_total", "mcpgate_call_duration_seconds", "mcpgate_denials_total", "mcpgate_sessions_open", "go_goroutines"} {
		if !slices.Contains(names, want) {
			t.Errorf("Names lacks %s: %v", want, names)
		}
	}
	if n := len(slices.Compact(slices.Clone(names))); n != len(names) {
		t.Errorf("Names repeats a name: %v", names)
	}
}
