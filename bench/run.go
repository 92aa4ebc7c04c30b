// run.go is one run of the harness: build, start every process, open
// every experiment's callers, run the interleaved rounds, measure idle
// sessions and start-up, stop everything, write the results.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// pairPath names the Postgres pair for -only; pairMB is its table's
// size, about the 129 MB.
const (
	pairPath = "postgres-pair"
	pairMB   = 128
)

// sessionCap is the max_sessions given to the gateway whose idle sessions
// are measured: above the default 10,000, so that none is evicted.
const sessionCap = 20000

func run(ctx context.Context, o options, stdout io.Writer) (err error) {
	if o.short {
		o.shorten()
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if o.out == "" {
		o.out = filepath.Join(root, ".cache", "bench")
	}
	logs := filepath.Join(o.out, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mcpgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	e := &env{dir: tmp, ps: &procs{logs: logs}, hc: newHTTPClient(128), profile: o.profile}
	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return err
		}
	}
	defer e.hc.CloseIdleConnections()
	defer e.ps.stopAll()
	if e.self, err = os.Executable(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "building mcpgate ...")
	if e.mcpgate, err = buildMcpgate(ctx, root); err != nil {
		return err
	}
	if o.peers {
		if e.node22, e.superGW, err = findSupergateway(ctx, root); err != nil {
			return err
		}
	}

	res := &results{Machine: describeMachine(), Command: strings.TrimSpace("scripts/bench.sh " + strings.Join(os.Args[1:], " ")), Short: o.short,
		Rounds: o.rounds, WindowSec: o.window.Seconds(), Started: time.Now().UTC()}
	fmt.Fprintln(stdout, "starting the processes under test ...")
	xs, cleanup, err := e.experiments(ctx, o)
	defer cleanup()
	if err != nil {
		return err
	}
	xs = slices.DeleteFunc(xs, func(x *experiment) bool { return !o.keeps(x.t.name) })
	if len(xs) == 0 && !o.keeps(pairPath) {
		return fmt.Errorf("-only %q: no such path", o.only)
	}
	fmt.Fprintln(stdout, "warming up ...")
	for _, x := range xs {
		x.window(ctx, o.warmup) //nolint:errcheck // a warm-up's result is dropped
		x.total, x.mem, x.versusTotal = sample{}, memCounters{}, sample{}
		x.cost, x.costOK = procCost{}, false
		x.measuring = true
	}
	for r := range o.rounds {
		fmt.Fprintf(stdout, "round %d/%d\n", r+1, o.rounds)
		for i := range xs {
			x := xs[(i+r)%len(xs)] // rotate, so that no path always runs first
			if err := x.window(ctx, o.window); err != nil {
				return err
			}
		}
	}
	for _, x := range xs {
		res.Rows = append(res.Rows, x.rows()...)
	}
	if o.only != "" {
		if o.keeps(pairPath) {
			if res.Postgres, err = e.postgresPair(ctx, pairMB); err != nil {
				return fmt.Errorf("the Postgres pair: %w", err)
			}
		}
		res.ratios()
		return res.write(o.out, stdout)
	}

	fmt.Fprintln(stdout, "idle sessions ...")
	if res.Sessions, err = e.idleSessions(ctx, o); err != nil {
		return fmt.Errorf("idle sessions: %w", err)
	}
	fmt.Fprintln(stdout, "the Postgres pair ...")
	mb := pairMB
	if o.short {
		mb = 8
	}
	if res.Postgres, err = e.postgresPair(ctx, mb); err != nil {
		return fmt.Errorf("the Postgres pair: %w", err)
	}
	fmt.Fprintln(stdout, "time to first answer ...")
	if res.Startup, err = e.startup(ctx, o); err != nil {
		return fmt.Errorf("start-up: %w", err)
	}
	fmt.Fprintln(stdout, "catalogue sizes ...")
	if res.Catalogues, err = catalogues(ctx, o.peers); err != nil {
		return fmt.Errorf("catalogues: %w", err)
	}
	res.ratios()
	if err := res.write(o.out, stdout); err != nil {
		return err
	}
	if o.history == "" || o.short {
		return nil
	}
	svg := strings.TrimSuffix(o.history, ".json") + "-history.svg"
	if err := appendHistory(o.history, svg, res); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	fmt.Fprintf(stdout, "appended to %s; chart: %s\n", o.history, svg)
	return nil
}

// experiments starts every process and opens every experiment's callers.
func (e *env) experiments(ctx context.Context, o options) (xs []*experiment, cleanup func(), err error) {
	var closers []func()
	cleanup = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	direct, backend, err := e.startFixture(ctx)
	if err != nil {
		return nil, cleanup, err
	}
	e.backend = backend
	null, err := e.startNullRelay(ctx, backend)
	if err != nil {
		return nil, cleanup, err
	}
	gwHTTP, err := e.startGateway(ctx, "mcpgate-http", "mcpgate serve, http backend (the fixture), no prefix, service token, audit on", httpBackendYAML(backend), 0)
	if err != nil {
		return nil, cleanup, err
	}
	// The same with audit.async: what waiting for the record's group
	// commit costs, in the same run.
	gwAsync, err := e.startGateway(ctx, "mcpgate-http-audit-async", "mcpgate-http with audit.async: answers do not wait for their records",
		httpBackendYAML(backend)+"audit:\n  async: true\n", 0)
	if err != nil {
		return nil, cleanup, err
	}
	// The same with ten policy rules, each matched and passed: what the
	// rules cost a call, in the same run.
	gwRules, err := e.startGateway(ctx, "mcpgate-http-rules10", "mcpgate-http with ten policy rules (CEL), each matched and passed",
		httpBackendYAML(backend)+rulesYAML(10), 0)
	if err != nil {
		return nil, cleanup, err
	}
	// The same with one validating webhook on loopback, before each call:
	// what asking a hook costs the gateway, in the same run.
	hookURL, stopHook, err := startAllowHook()
	if err != nil {
		return nil, cleanup, err
	}
	closers = append(closers, stopHook)
	gwHook, err := e.startGateway(ctx, "mcpgate-http-hook", "mcpgate-http with one interceptor: a webhook on loopback asked before each call, allowing it",
		httpBackendYAML(backend)+fmt.Sprintf("interceptors:\n  - {name: allow, url: %q, on: [request]}\n", hookURL), 0)
	if err != nil {
		return nil, cleanup, err
	}
	gwStdio, err := e.startGateway(ctx, "mcpgate-stdio", "mcpgate serve, stdio backend (mcpgate fixture --stdio), no prefix, service token, audit on", e.stdioBackendYAML(), 0)
	if err != nil {
		return nil, cleanup, err
	}
	perPath, framedT, prompts, f, err := e.startProxy(ctx, "", "http upstream: the fixture", "--upstream", backend)
	if err != nil {
		return nil, cleanup, err
	}
	closers = append(closers, f.close)
	perPathStdio, framedStdio, _, fStdio, err := e.startProxy(ctx, "-stdio", "stdio upstream: mcpgate fixture --stdio",
		"--upstream-command", e.mcpgate+" fixture --stdio")
	if err != nil {
		return nil, cleanup, err
	}
	closers = append(closers, fStdio.close)
	sdkHTTP, err := e.startSDKRelay(ctx, "go-sdk-http", "go-sdk v1.8.0 relay, http backend (the fixture)", "-upstream", backend)
	if err != nil {
		return nil, cleanup, err
	}
	sdkStdio, err := e.startSDKRelay(ctx, "go-sdk-stdio", "go-sdk v1.8.0 relay, stdio backend (mcpgate fixture --stdio)", "-upstream-command", e.mcpgate+" fixture --stdio")
	if err != nil {
		return nil, cleanup, err
	}
	gwHTTP2026 := e.sessionless(gwHTTP, "mcpgate-http-2026", "the same mcpgate serve, called as 2026-07-28 clients: sessionless requests, no initialize")
	null64 := e.largeAnswers(null, "null-relay-64k", "the null relay, each call answered with 64 KiB of text")
	gwHTTP64 := e.largeAnswers(gwHTTP, "mcpgate-http-64k", "the same mcpgate serve, each call answered with 64 KiB of text")
	targets := []*target{null, direct, gwHTTP, gwHTTP2026, gwAsync, gwRules, gwHook, gwStdio, sdkHTTP, sdkStdio}
	replicaTargets, stopReplicas, err := e.replicaTargets(ctx)
	closers = append(closers, stopReplicas)
	if err != nil {
		return nil, cleanup, fmt.Errorf("replicas: %w", err)
	}
	if e.node22 != "" {
		sg, err := e.startSupergateway(ctx)
		if err != nil {
			return nil, cleanup, err
		}
		targets = append(targets, sg)
	}
	xs, err = prepareExperiments(ctx, o, plan{
		relays: targets, alone: []*target{null, direct, gwHTTP}, byTurns: []turns{{gwHTTP, null, 1}, {gwHTTP2026, gwHTTP, 16}}, replicas: replicaTargets, large: []*target{null64, gwHTTP64},
		wire:      map[*target][]int{perPath: {1, 64}, framedT: {1, 64}, prompts: {1, 64}, perPathStdio: {64}, framedStdio: {64}},
		wireOrder: []*target{perPath, framedT, prompts, perPathStdio, framedStdio},
	}, &closers)
	return xs, cleanup, err
}

// plan is what the experiments measure. The relays run at 16 callers,
// closed and open loop, and with one caller for alone. Each pair of
// byTurns runs one caller of each by turns. The replicas and the large
// answers run closed loop; the wire's forms at the counts of callers wire
// names, in wireOrder.
type plan struct {
	relays, alone, replicas, large []*target
	byTurns                        []turns
	wire                           map[*target][]int
	wireOrder                      []*target
}

// turns are two relays run by turns with conc callers each.
type turns struct {
	a, b *target
	conc int
}

// prepareExperiments prepares every experiment of p; what needs closing
// is added to closers.
func prepareExperiments(ctx context.Context, o options, p plan, closers *[]func()) ([]*experiment, error) {
	var xs []*experiment
	const conc = 16
	opened := map[*target][]caller{}
	for _, t := range p.relays {
		closed := &experiment{t: t, conc: conc, profileDir: o.profile}
		if err := closed.prepare(ctx, nil); err != nil {
			return nil, err
		}
		opened[t] = closed.callers
		*closers = append(*closers, func() { closed.closeCallers(context.Background()) })
		open := &experiment{t: t, open: true, conc: conc, rate: o.rate}
		if err := open.prepare(ctx, closed.callers); err != nil {
			return nil, err
		}
		xs = append(xs, closed, open)
		if slices.Contains(p.alone, t) {
			// One caller: the latency a relay adds when nothing queues.
			alone := &experiment{t: t, conc: 1}
			if err := alone.prepare(ctx, closed.callers); err != nil {
				return nil, err
			}
			xs = append(xs, alone)
		}
	}
	for _, tt := range p.byTurns {
		x := &experiment{t: tt.a, conc: tt.conc, versus: tt.b, versusCallers: opened[tt.b][:tt.conc]}
		if err := x.prepare(ctx, opened[tt.a]); err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}
	for _, t := range slices.Concat(p.replicas, p.large) {
		x := &experiment{t: t, conc: conc, profileDir: o.profile}
		if err := x.prepare(ctx, nil); err != nil {
			return nil, err
		}
		*closers = append(*closers, func() { x.closeCallers(context.Background()) })
		xs = append(xs, x)
	}
	for _, t := range p.wireOrder {
		for _, c := range p.wire[t] {
			x := &experiment{t: t, conc: c}
			if err := x.prepare(ctx, nil); err != nil {
				return nil, err
			}
			xs = append(xs, x)
		}
	}
	return xs, nil
}

// idleSessions measures idle-session memory on a gateway of its own.
func (e *env) idleSessions(ctx context.Context, o options) ([]sessionMemory, error) {
	var counts []int
	for _, s := range strings.Split(o.sessions, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-sessions: %q is not a count", s)
		}
		counts = append(counts, n)
	}
	// GOGC=100 turns mcpgate's heap room off (internal/heaproom): the
	// room is a fixed 32 MiB, not a cost per session, and the garbage it
	// lets stay would be counted here as the sessions'.
	t, err := e.startGatewayIn(ctx, []string{"GOGC=100"}, "mcpgate-sessions", "", httpBackendYAML(e.backend), sessionCap)
	if err != nil {
		return nil, err
	}
	defer t.proc.stop()
	return measureSessions(ctx, t, counts, sessionCap)
}

func (e *env) startup(ctx context.Context, o options) (startupResult, error) {
	ds, err := e.startupTimes(ctx, e.backend, o.startups)
	if err != nil {
		return startupResult{}, err
	}
	r := startupResult{MedianMs: ms(median(ds))}
	for _, d := range ds {
		r.EachMs = append(r.EachMs, ms(d))
	}
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// moduleRoot is the folder of go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the mcpgate module")
	}
	return filepath.Dir(gomod), nil
}

// buildMcpgate builds the binary under test into .cache/bin.
func buildMcpgate(ctx context.Context, root string) (string, error) {
	bin := filepath.Join(root, ".cache", "bin", "mcpgate")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/mcpgate")
	cmd.Dir, cmd.Stderr = root, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/mcpgate: %w", err)
	}
	return bin, nil
}

// findSupergateway asks scripts/peers.sh (which installs what is missing).
func findSupergateway(ctx context.Context, root string) (node, sg string, err error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "peers.sh"), "install")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("scripts/peers.sh: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "NODE22":
			node = v
		case "SUPERGATEWAY":
			sg = v
		}
	}
	if node == "" || sg == "" {
		return "", "", errors.New("scripts/peers.sh did not name NODE22 and SUPERGATEWAY")
	}
	return node, sg, nil
}
