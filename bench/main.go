// Command bench is mcpgate's benchmark harness: a load generator that
// drives tools/call through every path. The paths are the fixture alone, a
// null relay (the ceiling), mcpgate serve with an http and a stdio backend,
// mcpgate proxy over both forms of the wire, a go-sdk relay and
// supergateway. They are interleaved in one run, so that the drift of a
// shared machine hits all of them alike. It reports calls/s, latency
// quantiles, allocations per call of the relay process, and ratios computed
// within the run. It also measures the resident memory of idle sessions and
// the time to the first answer after mcpgate serve starts.
//
//	go run ./bench [-short] [-out DIR]
//
// Every process under test is a separate process on a free loopback port;
// the bench's own relays are this program, run again in a role.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// childRole, in the environment, runs this program as one of its relays.
const childRole = "MCPGATE_BENCH_ROLE"

func main() {
	if err := runRole(os.Getenv(childRole), os.Args[1:]); err != errNoRole {
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	o.register(flag.CommandLine)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

var errNoRole = fmt.Errorf("no role")

// runRole runs the relay named by role, or returns errNoRole.
func runRole(role string, args []string) error {
	switch role {
	case "":
		return errNoRole
	case "null-relay":
		return runNullRelay(args)
	case "sdk-relay":
		return runSDKRelay(args)
	}
	return fmt.Errorf("unknown role %q", role)
}

// options are the harness's flags.
type options struct {
	short    bool
	out      string
	rounds   int
	window   time.Duration
	warmup   time.Duration
	rate     float64
	sessions string // counts of idle sessions to measure
	startups int
	peers    bool // run the Node peer (supergateway); off: skip it
	only     string
	history  string // a full run's ratios are appended here ("": nowhere)
	profile  string // folder for the gateways' CPU profiles ("": none taken)
}

func (o *options) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.short, "short", false, "a few seconds in all: only shows that the harness works (numbers mean nothing)")
	fs.StringVar(&o.out, "out", "", "folder for results.json, results.md and the processes' logs (default .cache/bench)")
	fs.IntVar(&o.rounds, "rounds", 4, "rounds: each runs one window of every path, in a rotated order")
	fs.DurationVar(&o.window, "window", 2*time.Second, "length of one measured window")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load on each path before the rounds")
	fs.Float64Var(&o.rate, "rate", 1000, "open loop: calls a second")
	fs.StringVar(&o.sessions, "sessions", "1000,10000", "idle session counts whose memory is measured")
	fs.IntVar(&o.startups, "startups", 5, "how many times to time mcpgate serve's first answer")
	fs.BoolVar(&o.peers, "peers", true, "include supergateway (needs scripts/peers.sh)")
	fs.StringVar(&o.history, "history", "", "append a full run's ratios, with the commit, to this JSON file, and draw them in an SVG beside it (scripts/bench.sh: docs/benchmarks.json)")
	fs.StringVar(&o.profile, "profile", "", "write a CPU profile of each mcpgate serve under test, taken over its first closed-loop window at 16 callers, into this folder (go tool pprof FILE)")
	fs.StringVar(&o.only, "only", "", "comma-separated paths: measure only their rows, and nothing else (no sessions, start-up, catalogues, Postgres pair)")
}

// keeps reports whether -only lets path's rows run.
func (o *options) keeps(path string) bool {
	return o.only == "" || slices.Contains(strings.Split(o.only, ","), path)
}

// shorten makes a run of a few seconds.
func (o *options) shorten() {
	o.rounds, o.window, o.warmup, o.rate, o.sessions, o.startups = 1, 150*time.Millisecond, 50*time.Millisecond, 200, "20,50", 1
}
