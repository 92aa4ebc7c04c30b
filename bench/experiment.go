// experiment.go is one measured row: a target under a load (closed loop at
// a concurrency, or open loop at a rate), with its callers opened once. It
// adds up what its windows saw: the calls, and the allocations the relay
// process counted while they ran.

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

type experiment struct {
	t       *target
	open    bool    // open loop at rate; else closed loop
	conc    int     // callers (closed loop) or the pool of callers (open loop)
	rate    float64 // open loop: calls a second
	callers []caller

	total      sample
	rounds     []stats     // each measured window's own figures, in round order
	mem        memCounters // allocations in the relay over the windows
	memOK      bool
	scrapeCost memCounters // what one read of the counters costs the process
	cost       procCost    // CPU time and syscalls of the relay process over the windows
	costOK     bool
	profileDir string // -profile
	measuring  bool   // the warm-up is over

	// versus, when set, is another path run by turns with this one: one
	// caller each, call by call (alternatingLoop), or conc callers each,
	// turn by turn (turnsLoop). What its calls saw is kept apart, as the
	// other path's row.
	versus        *target
	versusCallers []caller
	versusTotal   sample
	versusRounds  []stats
}

// turn is how long each path's loop runs in turnsLoop.
const turn = 100 * time.Millisecond

func (x *experiment) id() string {
	if x.versus != nil {
		return fmt.Sprintf("%s by turns with %s, c=%d", x.t.name, x.versus.name, x.conc)
	}
	if x.open {
		return fmt.Sprintf("%s open@%.0f/s", x.t.name, x.rate)
	}
	return fmt.Sprintf("%s c=%d", x.t.name, x.conc)
}

// prepare opens the callers (sessions initialized once) and measures what
// reading the counters costs, to subtract it from each window.
func (x *experiment) prepare(ctx context.Context, shared []caller) error {
	if shared != nil {
		x.callers = shared[:x.conc]
	} else {
		for range x.conc {
			c, err := x.t.open(ctx)
			if err != nil {
				return fmt.Errorf("%s: opening a caller: %w", x.id(), err)
			}
			x.callers = append(x.callers, c)
		}
	}
	if x.t.counters != nil && !x.sharesProcess() {
		a, err := x.t.counters.read(ctx)
		if err != nil {
			return fmt.Errorf("%s: counters: %w", x.id(), err)
		}
		b, err := x.t.counters.read(ctx)
		if err != nil {
			return fmt.Errorf("%s: counters: %w", x.id(), err)
		}
		x.scrapeCost, x.memOK = b.minus(a), true
	}
	return nil
}

// window runs the load for d and adds the result.
func (x *experiment) window(ctx context.Context, d time.Duration) error {
	var before memCounters
	if x.memOK {
		var err error
		if before, err = x.t.counters.read(ctx); err != nil {
			return err
		}
	}
	costBefore, costErr := x.procCost()
	profiled := x.startProfile(ctx, d)
	var s sample
	switch {
	case x.versus != nil:
		var vs sample
		if x.conc == 1 {
			s, vs = alternatingLoop(ctx, x.callers[0], x.versusCallers[0], d)
		} else {
			s, vs = turnsLoop(ctx, x.callers, x.versusCallers, d, turn)
		}
		if x.measuring {
			x.versusRounds = append(x.versusRounds, summarise(vs))
		}
		x.versusTotal.add(vs)
	case x.open:
		s = openLoop(ctx, x.callers, x.rate, d)
	default:
		s = closedLoop(ctx, x.callers, d)
	}
	if x.memOK {
		after, err := x.t.counters.read(ctx)
		if err != nil {
			return err
		}
		d := after.minus(before).minus(x.scrapeCost)
		x.mem.mallocs += d.mallocs
		x.mem.bytes += d.bytes
	}
	if costAfter, err := x.procCost(); err == nil && costErr == nil {
		d := costAfter.minus(costBefore)
		x.cost.cpuTicks += d.cpuTicks
		x.cost.syscalls += d.syscalls
		x.costOK = true
	}
	if err := profiled(); err != nil {
		return fmt.Errorf("%s: profile: %w", x.id(), err)
	}
	if x.measuring {
		x.rounds = append(x.rounds, summarise(s))
	}
	x.total.add(s)
	if s.calls == 0 && s.firstErr != nil {
		return fmt.Errorf("%s: no call answered: %w", x.id(), s.firstErr)
	}
	if x.versus != nil && x.versusTotal.calls == 0 && x.versusTotal.firstErr != nil {
		return fmt.Errorf("%s: no call to %s answered: %w", x.id(), x.versus.name, x.versusTotal.firstErr)
	}
	return nil
}

// startProfile begins a CPU profile of the gateway over the window about
// to run, when -profile asked for one and this is its first closed-loop
// window at 16 callers. The function returned waits for it and writes it.
func (x *experiment) startProfile(ctx context.Context, d time.Duration) func() error {
	t := x.t
	if t.pprof == "" || t.profiled || x.open || x.conc != 16 || x.profileDir == "" || !x.measuring {
		return func() error { return nil }
	}
	t.profiled = true
	secs := max(1, int(d.Seconds()))
	done := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", t.pprof, secs), nil)
		if err != nil {
			done <- err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(x.profileDir, t.name+".cpu.pprof"), b, 0o644)
		}
		done <- err
	}()
	return func() error { return <-done }
}

// procCost reads the relay process's counters (an error when there is
// no process of its own, or no /proc).
func (x *experiment) procCost() (procCost, error) {
	if x.t.proc == nil || x.sharesProcess() {
		return procCost{}, errNoProc
	}
	return readProcCost(x.t.proc.pid())
}

var errNoProc = fmt.Errorf("no process")

// sharesProcess says the path run by turns with this one is served by
// the same process: its counters would count both paths' calls, so
// neither row gives per-call figures.
func (x *experiment) sharesProcess() bool { return x.versus != nil && x.versus.proc == x.t.proc }

func (x *experiment) closeCallers(ctx context.Context) {
	for _, c := range x.callers {
		c.close(ctx)
	}
}

// alternating is the load of an experiment run by turns with another
// path's caller, call by call; inTurns16 with another path's 16 callers,
// turn by turn.
const (
	alternating = "alternating c=1"
	inTurns16   = "in turns c=16"
)

// rows are the experiment's lines of the report: its own, and the other
// path's when it ran by turns with one.
func (x *experiment) rows() []row {
	r := x.row()
	if x.versus == nil {
		return []row{r}
	}
	r.Load = alternating
	if x.conc > 1 {
		r.Load = fmt.Sprintf("in turns c=%d", x.conc)
	}
	v := row{Path: x.versus.name, Load: r.Load, Note: x.versus.note, Stats: summarise(x.versusTotal), Rounds: x.versusRounds}
	if x.versusTotal.firstErr != nil {
		v.FirstError = x.versusTotal.firstErr.Error()
	}
	return []row{r, v}
}

// row is the experiment's line of the report.
type row struct {
	Path  string `json:"path"`
	Load  string `json:"load"`
	Note  string `json:"note"`
	Stats stats  `json:"stats"`
	// Rounds are each round's window alone: how far the figures move
	// within one run.
	Rounds        []stats `json:"rounds,omitempty"`
	AllocsPerCall float64 `json:"allocs_per_call,omitempty"`
	BytesPerCall  float64 `json:"bytes_per_call,omitempty"`
	// CPUusPerCall and SyscallsPerCall are the process's (the relay's, or
	// the fixture's for direct): its CPU time and its read and write
	// calls over the windows, divided by the calls.
	CPUusPerCall    float64 `json:"cpu_us_per_call,omitempty"`
	SyscallsPerCall float64 `json:"syscalls_per_call,omitempty"`
	FirstError      string  `json:"first_error,omitempty"`
}

func (x *experiment) row() row {
	r := row{Path: x.t.name, Note: x.t.note, Stats: summarise(x.total), Rounds: x.rounds}
	if x.open {
		r.Load = fmt.Sprintf("open %.0f/s", x.rate)
	} else {
		r.Load = fmt.Sprintf("closed c=%d", x.conc)
	}
	if x.memOK && x.total.calls > 0 {
		r.AllocsPerCall = float64(x.mem.mallocs) / float64(x.total.calls)
		r.BytesPerCall = float64(x.mem.bytes) / float64(x.total.calls)
	}
	if x.costOK && x.total.calls > 0 {
		r.CPUusPerCall = float64(x.cost.cpuTicks) * 1e6 / clockTicks / float64(x.total.calls)
		r.SyscallsPerCall = float64(x.cost.syscalls) / float64(x.total.calls)
	}
	if x.total.firstErr != nil {
		r.FirstError = x.total.firstErr.Error()
	}
	return r
}
