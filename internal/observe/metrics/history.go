// history.go keeps what the console's overview draws, in process and in
// bounded memory: rings of fixed steps, ten seconds over the last hour and
// a minute over the last six. Each step holds the gated calls, errors and
// a latency histogram (the Prometheus histogram's bounds), overall and
// per backend, and the denials by reason. Sampled gauges (sessions and
// streams, each backend's state and restarts) are written by Sample.
// Per minute, the principals and entries with calls or denials are
// tallied, at most tallyKeys of each; the rest count as "(others)".
//
// The memory is fixed by the rings' sizes, not by the traffic: a gateway
// at 1,000 calls a second holds what an idle one does (history_test.go
// measures it).

package metrics

import (
	"cmp"
	"slices"
	"sort"
	"sync"
	"time"
)

// historyLen is the steps each ring holds.
const historyLen = 360

// Range is a span the overview shows, and the width of its steps.
type Range struct {
	Name       string
	Span, Step time.Duration
}

// Ranges are the spans the overview offers; the second is the default.
var Ranges = []Range{
	{"15m", 15 * time.Minute, 10 * time.Second},
	{"1h", time.Hour, 10 * time.Second},
	{"6h", 6 * time.Hour, time.Minute},
}

// RangeNamed is the range of that name, or the default one.
func RangeNamed(name string) Range {
	for _, r := range Ranges {
		if r.Name == name {
			return r
		}
	}
	return Ranges[1]
}

// The reasons a call or a session is refused (mcpgate_denials_total).
const (
	DeniedRole        = "role"
	DeniedPolicy      = "policy"
	DeniedInterceptor = "interceptor"
	DeniedRate        = "rate"
	DeniedSessionCap  = "session_cap"
)

// DenialReasons are the reasons, in the order the overview shows them.
var DenialReasons = [...]string{DeniedRole, DeniedPolicy, DeniedInterceptor, DeniedRate, DeniedSessionCap}

// tier is a resolution: fine is ten seconds over an hour, coarse a minute
// over six hours.
type tier int

const (
	fine tier = iota
	coarse
	tiers
)

var tierStep = [tiers]time.Duration{10 * time.Second, time.Minute}

// slot is where now falls in a tier's ring, and the step it stands for.
func slot(t tier, now time.Time) (int, int64) {
	step := now.UnixNano() / int64(tierStep[t])
	return int(step % historyLen), step
}

// cell is one step's calls, errors and latency histogram.
type cell struct {
	calls, errors uint32
	lat           [len(durationBounds) + 1]uint32 // the last: over the last bound
}

func (c *cell) add(d time.Duration, isErr bool) {
	c.calls++
	if isErr {
		c.errors++
	}
	c.lat[sort.SearchFloat64s(durationBounds[:], d.Seconds())]++
}

func (c *cell) merge(o *cell) {
	c.calls += o.calls
	c.errors += o.errors
	for i, n := range o.lat {
		c.lat[i] += n
	}
}

// quantile is the q-quantile of the cell's latencies in seconds,
// interpolated within its bucket as Prometheus's histogram_quantile does;
// -1 with no call.
func (c *cell) quantile(q float64) float64 {
	if c.calls == 0 {
		return -1
	}
	rank := q * float64(c.calls)
	var seen float64
	for b, n := range c.lat {
		if n == 0 || seen+float64(n) < rank {
			seen += float64(n)
			continue
		}
		if b == len(durationBounds) {
			return durationBounds[b-1]
		}
		lo := 0.0
		if b > 0 {
			lo = durationBounds[b-1]
		}
		return lo + (durationBounds[b]-lo)*(rank-seen)/float64(n)
	}
	return durationBounds[len(durationBounds)-1]
}

// overallRing is one tier of the gateway's own history.
type overallRing struct {
	at      [historyLen]int64
	cells   [historyLen]cell
	denials [historyLen][len(DenialReasons)]uint32 // by DenialReasons
}

func (r *overallRing) fresh(i int, step int64) {
	if r.at[i] != step {
		r.at[i], r.cells[i], r.denials[i] = step, cell{}, [len(DenialReasons)]uint32{}
	}
}

// Backend states as sampled into a step: bits, so that a step that saw
// both is a flap.
const (
	sawUp uint8 = 1 << iota
	sawDown
)

// backendRings are one backend's tiers.
type backendRings struct {
	at       [tiers][historyLen]int64
	cells    [tiers][historyLen]cell
	state    [tiers][historyLen]uint8
	restarts [tiers][historyLen]uint16
	// lastRestarts is the restart count at the last sample; seen when
	// the backend was last among the states sampled.
	lastRestarts int
	seen         time.Time
}

func (b *backendRings) fresh(t tier, i int, step int64) {
	if b.at[t][i] != step {
		b.at[t][i], b.cells[t][i], b.state[t][i], b.restarts[t][i] = step, cell{}, 0, 0
	}
}

// gaugeRings are one sampled gauge's tiers: the most seen in each step.
type gaugeRings struct {
	name string
	read func() int
	at   [tiers][historyLen]int64
	max  [tiers][historyLen]uint32
}

// tallyKeys bounds the principals and the entries one minute keeps.
const tallyKeys = 32

// others is where calls past tallyKeys are counted.
const others = "(others)"

// Tally is a principal's or an entry's calls and denials.
type Tally struct {
	Name           string
	Calls, Denials uint64
}

// counts are one minute's calls and denials of one name, kept by value.
type counts struct{ calls, denials uint32 }

type tallies struct {
	at                  int64
	principals, entries map[string]counts
}

func count(m map[string]counts, name string, calls, denials uint32) {
	c, ok := m[name]
	if !ok && len(m) >= tallyKeys {
		name = others
		c = m[others]
	}
	c.calls += calls
	c.denials += denials
	m[name] = c
}

// history is every ring, under one lock: a call's record is a few
// increments.
type history struct {
	mu       sync.Mutex
	overall  [tiers]overallRing
	backends map[string]*backendRings
	gauges   []*gaugeRings
	minutes  [historyLen]tallies // by coarse step
}

func (h *history) init() { h.backends = map[string]*backendRings{} }

func (h *history) gauge(name string, read func() int) {
	h.mu.Lock()
	h.gauges = append(h.gauges, &gaugeRings{name: name, read: read})
	h.mu.Unlock()
}

func reasonIndex(reason string) int { return slices.Index(DenialReasons[:], reason) }

// call records one gated call: backend "" is the gateway's own, reason
// the denial's ("" when it was not refused).
func (h *history) call(now time.Time, backend, principal, entry string, d time.Duration, isErr bool, reason string) {
	r := reasonIndex(reason)
	h.mu.Lock()
	defer h.mu.Unlock()
	var b *backendRings
	if backend != "" {
		if b = h.backends[backend]; b == nil {
			b = &backendRings{seen: now}
			h.backends[backend] = b
		}
	}
	for t := range tiers {
		i, step := slot(t, now)
		o := &h.overall[t]
		o.fresh(i, step)
		o.cells[i].add(d, isErr)
		if r >= 0 {
			o.denials[i][r]++
		}
		if b != nil {
			b.fresh(t, i, step)
			b.cells[t][i].add(d, isErr)
		}
	}
	var denied uint32
	if r >= 0 {
		denied = 1
	}
	m := h.minute(now)
	count(m.principals, principal, 1, denied)
	count(m.entries, entry, 1, denied)
}

// denied records a refusal that was no call (a session past a cap).
func (h *history) denied(now time.Time, principal, reason string) {
	r := reasonIndex(reason)
	h.mu.Lock()
	defer h.mu.Unlock()
	for t := range tiers {
		i, step := slot(t, now)
		h.overall[t].fresh(i, step)
		h.overall[t].denials[i][r]++
	}
	count(h.minute(now).principals, principal, 0, 1)
}

// minute is now's tallies, emptied when the ring comes round; the caller
// holds mu.
func (h *history) minute(now time.Time) *tallies {
	i, step := slot(coarse, now)
	m := &h.minutes[i]
	if m.at != step || m.principals == nil {
		m.at = step
		if m.principals == nil {
			m.principals, m.entries = map[string]counts{}, map[string]counts{}
		}
		clear(m.principals)
		clear(m.entries)
	}
	return m
}

// Sample records the sampled gauges and each backend's state at now. The
// gateway calls it every ten seconds, and before the overview is drawn.
// A backend gone from states for longer than the history reaches is
// forgotten.
func (m *Metrics) Sample(now time.Time, states []BackendState) {
	h := &m.history
	h.mu.Lock()
	gauges := slices.Clone(h.gauges)
	h.mu.Unlock()
	values := make([]int, len(gauges))
	for k, g := range gauges {
		values[k] = g.read() // outside the lock: a gauge takes its own
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, g := range gauges {
		for t := range tiers {
			i, step := slot(t, now)
			if g.at[t][i] != step {
				g.at[t][i], g.max[t][i] = step, 0
			}
			g.max[t][i] = max(g.max[t][i], uint32(values[k]))
		}
	}
	for _, s := range states {
		b := h.backends[s.Name]
		if b == nil {
			b = &backendRings{lastRestarts: s.Restarts}
			h.backends[s.Name] = b
		}
		b.seen = now
		restarted := s.Restarts - b.lastRestarts
		if restarted < 0 { // re-added: counting from zero again
			restarted = s.Restarts
		}
		b.lastRestarts = s.Restarts
		var bit uint8
		switch {
		case s.Up:
			bit = sawUp
		case !s.Starting:
			bit = sawDown
		}
		for t := range tiers {
			i, step := slot(t, now)
			b.fresh(t, i, step)
			b.state[t][i] |= bit
			b.restarts[t][i] += uint16(min(restarted, 1000))
		}
	}
	reach := Ranges[len(Ranges)-1].Span
	for name, b := range h.backends {
		if now.Sub(b.seen) > reach {
			delete(h.backends, name)
		}
	}
}

// History is what the overview draws of one range: one value per step,
// oldest first. A latency of -1 is a step without calls; a gauge's -1 a
// step never sampled.
type History struct {
	Range Range
	Steps []time.Time // each step's start
	// Calls and Errors are a second, over each step.
	Calls, Errors []float64
	P50, P99      []float64 // seconds
	// Denials are each reason's refusals in each step, by DenialReasons.
	Denials      [][]float64
	DenialTotals []uint64
	// Total is the range's calls, errors and latency as one.
	TotalCalls, TotalErrors uint64
	TotalP50, TotalP99      float64
	Backends                []BackendHistory
	Gauges                  []GaugeHistory
	// Principals and Entries are every one tallied over the range (at
	// whole minutes), most calls first.
	Principals, Entries []Tally
}

// BackendHistory is one backend's part of a range.
type BackendHistory struct {
	Name          string
	Calls, Errors uint64
	P50, P99      []float64
	TotalP99      float64
	// State is "up", "down", "flap" (both in one step) or "" (unknown)
	// for each step; Restarts the restarts seen in it.
	State    []string
	Restarts []int
}

// GaugeHistory is one sampled gauge over a range: the most seen in each
// step, and its latest sample.
type GaugeHistory struct {
	Name   string
	Values []float64
	Latest int
}

// History reads the range r back as of now.
func (m *Metrics) History(now time.Time, r Range) History {
	t := fine
	if r.Step != tierStep[fine] {
		t, r.Step = coarse, tierStep[coarse]
	}
	n := min(int(r.Span/r.Step), historyLen)
	_, last := slot(t, now)
	out := History{Range: r, Steps: make([]time.Time, n), Calls: make([]float64, n), Errors: make([]float64, n),
		P50: make([]float64, n), P99: make([]float64, n), Denials: make([][]float64, len(DenialReasons)),
		DenialTotals: make([]uint64, len(DenialReasons))}
	for k := range out.Denials {
		out.Denials[k] = make([]float64, n)
	}
	per := r.Step.Seconds()
	h := &m.history
	h.mu.Lock()
	defer h.mu.Unlock()
	var total cell
	o := &h.overall[t]
	for k := range n {
		step := last - int64(n-1-k)
		out.Steps[k] = time.Unix(0, step*int64(r.Step)).UTC()
		i := int(step % historyLen)
		c := cell{}
		if o.at[i] == step {
			c = o.cells[i]
			for d, v := range o.denials[i] {
				out.Denials[d][k] = float64(v)
				out.DenialTotals[d] += uint64(v)
			}
		}
		total.merge(&c)
		out.Calls[k], out.Errors[k] = float64(c.calls)/per, float64(c.errors)/per
		out.P50[k], out.P99[k] = c.quantile(0.5), c.quantile(0.99)
	}
	out.TotalCalls, out.TotalErrors = uint64(total.calls), uint64(total.errors)
	out.TotalP50, out.TotalP99 = total.quantile(0.5), total.quantile(0.99)
	out.Backends = h.backendHistories(t, last, n)
	out.Gauges = h.gaugeHistories(t, last, n)
	out.Principals, out.Entries = h.tallied(now, r.Span)
	return out
}

func (h *history) backendHistories(t tier, last int64, n int) []BackendHistory {
	names := make([]string, 0, len(h.backends))
	for name := range h.backends {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]BackendHistory, 0, len(names))
	for _, name := range names {
		b := h.backends[name]
		bh := BackendHistory{Name: name, P50: make([]float64, n), P99: make([]float64, n),
			State: make([]string, n), Restarts: make([]int, n)}
		var total cell
		for k := range n {
			step := last - int64(n-1-k)
			i := int(step % historyLen)
			c := cell{}
			if b.at[t][i] == step {
				c = b.cells[t][i]
				bh.State[k] = stateName(b.state[t][i])
				bh.Restarts[k] = int(b.restarts[t][i])
			}
			total.merge(&c)
			bh.P50[k], bh.P99[k] = c.quantile(0.5), c.quantile(0.99)
		}
		bh.Calls, bh.Errors, bh.TotalP99 = uint64(total.calls), uint64(total.errors), total.quantile(0.99)
		out = append(out, bh)
	}
	return out
}

func stateName(s uint8) string {
	switch s {
	case sawUp:
		return "up"
	case sawDown:
		return "down"
	case sawUp | sawDown:
		return "flap"
	}
	return ""
}

func (h *history) gaugeHistories(t tier, last int64, n int) []GaugeHistory {
	out := make([]GaugeHistory, len(h.gauges))
	for g, gr := range h.gauges {
		gh := GaugeHistory{Name: gr.name, Values: make([]float64, n), Latest: -1}
		for k := range n {
			step := last - int64(n-1-k)
			i := int(step % historyLen)
			gh.Values[k] = -1
			if gr.at[t][i] == step {
				gh.Values[k] = float64(gr.max[t][i])
				gh.Latest = int(gr.max[t][i])
			}
		}
		out[g] = gh
	}
	return out
}

// tallied sums the minutes of the span up to now, most calls first.
func (h *history) tallied(now time.Time, span time.Duration) (principals, entries []Tally) {
	_, last := slot(coarse, now)
	minutes := int64((span + time.Minute - 1) / time.Minute)
	p, e := map[string]*Tally{}, map[string]*Tally{}
	sum := func(to map[string]*Tally, from map[string]counts) {
		for name, c := range from {
			s := to[name]
			if s == nil {
				s = &Tally{Name: name}
				to[name] = s
			}
			s.Calls += uint64(c.calls)
			s.Denials += uint64(c.denials)
		}
	}
	for step := last - minutes + 1; step <= last; step++ {
		if m := &h.minutes[int(step%historyLen)]; m.at == step {
			sum(p, m.principals)
			sum(e, m.entries)
		}
	}
	return sorted(p), sorted(e)
}

func sorted(m map[string]*Tally) []Tally {
	out := make([]Tally, 0, len(m))
	for _, t := range m {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b Tally) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(b.Denials, a.Denials), cmp.Compare(a.Name, b.Name))
	})
	return out
}
