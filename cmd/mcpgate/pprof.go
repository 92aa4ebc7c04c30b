// pprof.go adds a hidden --pprof ADDR flag to a command: Go's profiling
// endpoints (/debug/pprof/) on their own listener while the command runs,
// so that `mcpgate serve` can be profiled as the benchmark harness runs
// it, in its own process. The endpoints reveal the process's memory and
// goroutines, so only a loopback address is accepted.

package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/loopback"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// addPprofFlag wraps cmd's RunE so that, with --pprof set, the profiling
// endpoints serve for as long as the command runs.
func addPprofFlag(cmd *cobra.Command) {
	var addr string
	cmd.Flags().StringVar(&addr, "pprof", "", "serve Go's profiling endpoints (/debug/pprof/) on this loopback address")
	_ = cmd.Flags().MarkHidden("pprof")
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if addr == "" {
			return run(c, args)
		}
		stop, err := servePprof(addr)
		if err != nil {
			return err
		}
		defer stop()
		fmt.Fprintf(c.ErrOrStderr(), "mcpgate: profiling endpoints at http://%s/debug/pprof/\n", addr)
		return run(c, args)
	}
}

// errPprofNotLoopback refuses a --pprof address off the loopback.
var errPprofNotLoopback = errors.New("--pprof: the address must be on the loopback (127.0.0.1, ::1 or localhost)")

// servePprof serves the profiling endpoints on addr, a loopback address,
// until stop.
func servePprof(addr string) (stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: %w", err)
	}
	if !loopback.Host(host) {
		return nil, errPprofNotLoopback
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := mcphttp.NewServer(mux)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	return func() { _ = srv.Close(); <-done }, nil
}
