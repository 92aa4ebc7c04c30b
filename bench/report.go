// report.go is the harness's output: the rows, the ratios the issue's
// targets are stated in (each computed from rows of the same run), the
// idle-session and start-up figures, as JSON and as a Markdown table.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

type results struct {
	Machine   machine         `json:"machine"`
	Command   string          `json:"command"`
	Short     bool            `json:"short"`
	Rounds    int             `json:"rounds"`
	WindowSec float64         `json:"window_sec"`
	Started   time.Time       `json:"started"`
	Rows      []row           `json:"rows"`
	Ratios    []ratio         `json:"ratios"`
	Sessions  []sessionMemory `json:"idle_sessions"`
	Startup   startupResult   `json:"time_to_first_answer"`
	Postgres  *pairResult     `json:"postgres_pair,omitempty"`
	// Catalogues are the bytes of tools/list in the full and the compact
	// view (catalogue.go).
	Catalogues []catalogueSize `json:"catalogues"`
}

type startupResult struct {
	MedianMs float64   `json:"median_ms"`
	EachMs   []float64 `json:"each_ms"`
}

// ratio is one figure a target is stated in, and the target.
type ratio struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Target string  `json:"target"`
	Met    bool    `json:"met"`
	Absent bool    `json:"absent,omitempty"` // a row it needs did not run
	// Rounds is the figure from each round's windows alone, when both
	// rows have them: one run's spread, to read Value against.
	Rounds []float64 `json:"rounds,omitempty"`
}

// eachRound is f of the two rows' windows of each round, or nil when the
// rows do not have as many rounds (a run of one round has no spread).
func eachRound(x, y *row, f func(a, b stats) float64) []float64 {
	if len(x.Rounds) < 2 || len(x.Rounds) != len(y.Rounds) {
		return nil
	}
	out := make([]float64, len(x.Rounds))
	for i := range out {
		out[i] = f(x.Rounds[i], y.Rounds[i])
	}
	return out
}

// callsRatio and p50Gap are the two kinds of figure two rows give.
func callsRatio(a, b stats) float64 {
	if b.CallsPerSec == 0 {
		return 0
	}
	return a.CallsPerSec / b.CallsPerSec
}

func p50Gap(a, b stats) float64 { return a.P50us - b.P50us }

func (r *results) find(path, load string) *row {
	for i := range r.Rows {
		if r.Rows[i].Path == path && r.Rows[i].Load == load {
			return &r.Rows[i]
		}
	}
	return nil
}

// ratios computes the figures from this run's rows.
func (r *results) ratios() {
	c16, c1, c64 := "closed c=16", "closed c=1", "closed c=64"
	div := func(name, a, la, b, lb string, target float64) {
		x, y := r.find(a, la), r.find(b, lb)
		if x == nil || y == nil || y.Stats.CallsPerSec == 0 {
			r.Ratios = append(r.Ratios, ratio{Name: name, Unit: "×", Target: fmt.Sprintf("≥ %g", target), Absent: true})
			if target == 0 {
				r.Ratios[len(r.Ratios)-1].Target = "(no target)"
			}
			return
		}
		v := callsRatio(x.Stats, y.Stats)
		r.Ratios = append(r.Ratios, ratio{Name: name, Value: v, Unit: "×", Target: fmt.Sprintf("≥ %g", target), Met: v >= target,
			Rounds: eachRound(x, y, callsRatio)})
		if target == 0 {
			r.Ratios[len(r.Ratios)-1].Target = "(no target)"
		}
	}
	div("mcpgate-http / null-relay calls/s (c=16)", "mcpgate-http", c16, "null-relay", c16, 0.85)
	// At c=1 nothing queues: what the gateway adds beyond a byte copy. The
	// target is read from calls made by turns: windows run seconds apart
	// see a machine whose speed has moved by more than the gap.
	if g, n := r.find("mcpgate-http", c1), r.find("null-relay", c1); g != nil && n != nil {
		v := p50Gap(g.Stats, n.Stats)
		r.Ratios = append(r.Ratios, ratio{Name: "mcpgate-http p50 − null-relay p50 (c=1)", Value: v, Unit: "µs", Target: "(reference: windows apart)", Met: true,
			Rounds: eachRound(g, n, p50Gap)})
	}
	if g, n := r.find("mcpgate-http", alternating), r.find("null-relay", alternating); g != nil && n != nil {
		v := p50Gap(g.Stats, n.Stats)
		r.Ratios = append(r.Ratios, ratio{Name: "mcpgate-http p50 − null-relay p50 (c=1, calls by turns)", Value: v, Unit: "µs", Target: "≤ 25", Met: v <= 25,
			Rounds: eachRound(g, n, p50Gap)})
	}
	// The sessionless target is read from the two loops run by turns, as
	// the c=1 gap is from calls by turns.
	div("mcpgate-http-2026 / mcpgate-http calls/s (c=16): a sessionless call against a session call", "mcpgate-http-2026", c16, "mcpgate-http", c16, 0)
	r.Ratios[len(r.Ratios)-1].Target = "(reference: windows apart)"
	div("mcpgate-http-2026 / mcpgate-http calls/s (c=16, in turns of 100 ms): a sessionless call against a session call", "mcpgate-http-2026", inTurns16, "mcpgate-http", inTurns16, 0.95)
	div("mcpgate-http-64k / null-relay-64k calls/s (c=16): each answer 64 KiB of text", "mcpgate-http-64k", c16, "null-relay-64k", c16, 0)
	div("mcpgate-http / mcpgate-http-audit-async calls/s (c=16): what waiting for the audit record's group commit costs", "mcpgate-http", c16, "mcpgate-http-audit-async", c16, 0)
	// What ten policy rules cost a call, in the gateway process's CPU
	// time, each.
	if g, b := r.find("mcpgate-http-rules10", c16), r.find("mcpgate-http", c16); g != nil && b != nil && g.CPUusPerCall > 0 && b.CPUusPerCall > 0 {
		v := (g.CPUusPerCall - b.CPUusPerCall) / 10
		r.Ratios = append(r.Ratios, ratio{Name: "(mcpgate-http-rules10 − mcpgate-http CPU µs/call) / 10 (c=16): one policy rule's cost", Value: v, Unit: "µs", Target: "≤ 5", Met: v <= 5})
	}
	// What one webhook on loopback costs a call: the gateway's CPU time,
	// and the time to answer with nothing queued.
	if g, b := r.find("mcpgate-http-hook", c16), r.find("mcpgate-http", c16); g != nil && b != nil && g.CPUusPerCall > 0 && b.CPUusPerCall > 0 {
		r.Ratios = append(r.Ratios, ratio{Name: "mcpgate-http-hook − mcpgate-http CPU µs/call (c=16): one interceptor's webhook, the gateway's side",
			Value: g.CPUusPerCall - b.CPUusPerCall, Unit: "µs", Target: "(no target)", Met: true})
	}
	div("mcpgate-http-hook / mcpgate-http calls/s (c=16): one interceptor's webhook on loopback", "mcpgate-http-hook", c16, "mcpgate-http", c16, 0)
	added := func(relay, load, name, target string, limit float64) {
		g, d := r.find(relay, load), r.find("direct", load)
		if g == nil || d == nil {
			return
		}
		v := p50Gap(g.Stats, d.Stats)
		r.Ratios = append(r.Ratios, ratio{Name: relay + " p50 − direct p50 (" + name + ")", Value: v, Unit: "µs", Target: target, Met: v <= limit,
			Rounds: eachRound(g, d, p50Gap)})
	}
	added("mcpgate-http", c16, "c=16", "≤ 100", 100)
	// The null relay's own figures are the floor any relay can reach here.
	added("null-relay", c16, "c=16", "(reference: the ceiling's)", 1e18)
	added("mcpgate-http", "open "+openLoad(r), "open loop "+openLoad(r), "≤ 100", 100)
	added("null-relay", "open "+openLoad(r), "open loop "+openLoad(r), "(reference: the ceiling's)", 1e18)
	added("mcpgate-http", c1, "c=1", "≤ 100", 100)
	added("null-relay", c1, "c=1", "(reference: the ceiling's)", 1e18)
	div("mcpgate-http / go-sdk-http calls/s (c=16)", "mcpgate-http", c16, "go-sdk-http", c16, 3)
	div("mcpgate-stdio / go-sdk-stdio calls/s (c=16)", "mcpgate-stdio", c16, "go-sdk-stdio", c16, 3)
	div("mcpgate-stdio / supergateway-stdio calls/s (c=16)", "mcpgate-stdio", c16, "supergateway-stdio", c16, 3)
	div("wire-framed / wire-per-path calls/s (c=64)", "wire-framed", c64, "wire-per-path", c64, 5)
	div("wire-framed / wire-per-path calls/s (c=1)", "wire-framed", c1, "wire-per-path", c1, 0)
	if p := r.Postgres; p != nil && p.DirectMBps > 0 && p.DirectOutMBps > 0 {
		r.Ratios = append(r.Ratios, ratio{Name: fmt.Sprintf("Postgres pair COPY MB/s / direct COPY MB/s (%d MB)", p.MB),
			Value: p.PairMBps / p.DirectMBps, Unit: "×", Target: "(no target)", Met: true})
		v := p.PairOutMBps / p.DirectOutMBps
		r.Ratios = append(r.Ratios, ratio{Name: fmt.Sprintf("Postgres pair COPY out MB/s / direct COPY out MB/s (%d MB)", p.MB),
			Value: v, Unit: "×", Target: "≥ 0.8", Met: v >= 0.8})
	} else {
		r.Ratios = append(r.Ratios, ratio{Name: "Postgres pair COPY MB/s / direct COPY MB/s", Unit: "×", Target: "(no target)", Absent: true},
			ratio{Name: "Postgres pair COPY out MB/s / direct COPY out MB/s", Unit: "×", Target: "≥ 0.8", Absent: true})
	}
	div("wire-framed-prompts / wire-framed calls/s (c=64): prompts/get on tag 9 beside tools/call", "wire-framed-prompts", c64, "wire-framed", c64, 0)
	div("wire-framed-stdio / wire-per-path-stdio calls/s (c=64)", "wire-framed-stdio", c64, "wire-per-path-stdio", c64, 0)
	r.Ratios[len(r.Ratios)-1].Target, r.Ratios[len(r.Ratios)-1].Met = "(no target; a stdio upstream)", true
	div("mcpgate-pg-redis / mcpgate-http calls/s (c=16): one replica on PostgreSQL + Redis against one on SQLite", "mcpgate-pg-redis", c16, "mcpgate-http", c16, 0.9)
	if g, d := r.find("mcpgate-pg-redis", c16), r.find("mcpgate-http", c16); g != nil && d != nil {
		r.Ratios = append(r.Ratios, ratio{Name: "mcpgate-pg-redis p50 − mcpgate-http p50 (c=16): the shared engines per call",
			Value: g.Stats.P50us - d.Stats.P50us, Unit: "µs", Target: "(no target)", Met: true})
	}
	div("mcpgate-pg-redis-journal / mcpgate-http calls/s (c=16): the same replica with audit.journal_dir, its answers waiting for a local journal as the SQLite row's do", "mcpgate-pg-redis-journal", c16, "mcpgate-http", c16, 0)
	div("haproxy-3-replicas / haproxy-1-replica calls/s (c=16): on two cores three replicas share what one had, so this shows what moving sessions between replicas costs, not what more machines would give", "haproxy-3-replicas", c16, "haproxy-1-replica", c16, 0)
	if g := r.find("mcpgate-http", c16); g != nil && g.BytesPerCall > 0 {
		v := g.BytesPerCall / 1024
		r.Ratios = append(r.Ratios, ratio{Name: "bytes allocated per relayed call, mcpgate-http", Value: v, Unit: "KiB", Target: "≤ 16", Met: v <= 16})
	}
	if g := r.find("mcpgate-stdio", c16); g != nil && g.BytesPerCall > 0 {
		v := g.BytesPerCall / 1024
		r.Ratios = append(r.Ratios, ratio{Name: "bytes allocated per relayed call, mcpgate-stdio", Value: v, Unit: "KiB", Target: "≤ 16", Met: v <= 16})
	}
	for _, s := range r.Sessions {
		v := s.BytesPerSession / 1024
		r.Ratios = append(r.Ratios, ratio{Name: fmt.Sprintf("resident memory per idle session (%d sessions)", s.Sessions),
			Value: v, Unit: "KiB", Target: "≤ 16", Met: v <= 16})
	}
	if n := len(r.Sessions); n > 0 {
		s := r.Sessions[n-1]
		v := 0.0
		if s.Held {
			v = float64(s.Sessions)
		}
		r.Ratios = append(r.Ratios, ratio{Name: "concurrent idle sessions held", Value: v, Unit: "sessions", Target: "10,000", Met: s.Held && s.Sessions >= 10000})
	}
}

func openLoad(r *results) string {
	for _, x := range r.Rows {
		if l, ok := strings.CutPrefix(x.Load, "open "); ok {
			return l
		}
	}
	return ""
}

func (r *results) write(dir string, stdout io.Writer) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	md := r.markdown()
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, "\n"+md)
	fmt.Fprintf(stdout, "\nwritten: %s, %s\n", filepath.Join(dir, "results.json"), filepath.Join(dir, "results.md"))
	return nil
}

func (r *results) markdown() string {
	var b strings.Builder
	if r.Short {
		b.WriteString("**Short mode: these numbers only show that the harness works.**\n\n")
	}
	fmt.Fprintf(&b, "Machine: %s, %d cores, %s. %d rounds of %.2gs windows, interleaved.\n\n", r.Machine.CPU, r.Machine.Cores, r.Machine.Go, r.Rounds, r.WindowSec)
	b.WriteString("| path | load | calls/s | p50 µs | p99 µs | p99.9 µs | allocs/call | KiB/call | CPU µs/call | syscalls/call | errors |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range r.Rows {
		allocs, kib, cpu, sys := "–", "–", "–", "–"
		if x.AllocsPerCall > 0 {
			allocs, kib = fmt.Sprintf("%.0f", x.AllocsPerCall), fmt.Sprintf("%.1f", x.BytesPerCall/1024)
		}
		if x.CPUusPerCall > 0 {
			cpu, sys = fmt.Sprintf("%.1f", x.CPUusPerCall), fmt.Sprintf("%.1f", x.SyscallsPerCall)
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %.0f | %.0f | %s | %s | %s | %s | %d |\n", x.Path, x.Load, x.Stats.CallsPerSec,
			x.Stats.P50us, x.Stats.P99us, x.Stats.P999us, allocs, kib, cpu, sys, x.Stats.Errors)
	}
	b.WriteString("\n| figure (same run) | value | target | met |\n|---|---:|---|---|\n")
	for _, x := range r.Ratios {
		val, met := fmt.Sprintf("%.2f %s", x.Value, x.Unit), map[bool]string{true: "yes", false: "**no**"}[x.Met]
		if len(x.Rounds) > 0 {
			val += fmt.Sprintf(" (rounds %.2f to %.2f)", slices.Min(x.Rounds), slices.Max(x.Rounds))
		}
		switch {
		case x.Absent:
			val, met = "not run", "–"
		case strings.HasPrefix(x.Target, "("):
			met = "–"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", x.Name, val, x.Target, met)
	}
	if len(r.Sessions) > 0 {
		b.WriteString("\n| idle sessions | RSS before | RSS after | per session | earliest still answer | max_sessions |\n|---:|---:|---:|---:|---|---:|\n")
		for _, s := range r.Sessions {
			fmt.Fprintf(&b, "| %d | %.1f MiB | %.1f MiB | %.1f KiB | %v | %d |\n", s.Sessions, float64(s.RSSBeforeBytes)/(1<<20),
				float64(s.RSSAfterBytes)/(1<<20), s.BytesPerSession/1024, s.Held, s.MaxSessions)
		}
	}
	if p := r.Postgres; p != nil {
		fmt.Fprintf(&b, "\nPostgres pair: a COPY of %d MB into PostgreSQL, median of %d: %.1f MB/s direct, %.1f MB/s through the pair (direct %v, pair %v).\n",
			p.MB, p.Repeats, p.DirectMBps, p.PairMBps, p.EachDirect, p.EachPair)
		fmt.Fprintf(&b, "The same table COPYed out (TO STDOUT): %.1f MB/s direct, %.1f MB/s through the pair (direct %v, pair %v).\n",
			p.DirectOutMBps, p.PairOutMBps, p.EachDirectOut, p.EachPairOut)
	}
	if len(r.Catalogues) > 0 {
		b.WriteString("\n| catalogue | tools | tools/list, full | compact (schemas without prose, first sentences) | compact / full |\n|---|---:|---:|---:|---:|\n")
		for _, c := range r.Catalogues {
			fmt.Fprintf(&b, "| %s | %d | %d B | %d B | %.2f |\n", c.Catalogue, c.Tools, c.FullBytes, c.CompactBytes, c.Ratio)
		}
		for _, c := range r.Catalogues {
			if c.SearchBytes > 0 {
				fmt.Fprintf(&b, "\nTool search over %s: tools/list in the search view is %d B (the full view %d B); one search takes %.0f µs (median).\n",
					c.Catalogue, c.SearchBytes, c.FullBytes, c.SearchMicros)
			}
		}
	}
	fmt.Fprintf(&b, "\nTime to first answer after `mcpgate serve` starts (process start → first successful tools/call): median %.1f ms (each: %v ms).\n",
		r.Startup.MedianMs, r.Startup.EachMs)
	return b.String()
}

type machine struct {
	CPU   string `json:"cpu"`
	Cores int    `json:"cores"`
	Go    string `json:"go"`
	OS    string `json:"os"`
}

// describeMachine reads the CPU model and core count from /proc/cpuinfo.
func describeMachine() machine {
	m := machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		m.Go = strings.TrimPrefix(strings.TrimSpace(string(out)), "go version ")
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		cores := 0
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			switch strings.TrimSpace(k) {
			case "model name":
				m.CPU = strings.TrimSpace(v)
			case "processor":
				cores++
			}
		}
		if cores > 0 {
			m.Cores = cores
		}
	}
	return m
}
