// serve_demo.go is what `mcpgate serve` runs when no backend is configured.
// The backend named "demo" is the conformance fixture (`mcpgate fixture`)
// started as a process backend behind `mcpgate proxy`: the whole chain a
// tool container would use, on one machine. Its tools go under their own
// names (prefix off), so that the printed commands call test_simple_text as
// it is. And the lines that show how to connect the MCP Inspector.

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/upstream"
)

// demoName is the demonstration backend's name.
const demoName = "demo"

// demoWait bounds how long the first run waits for the demo to come up
// before printing how to connect.
const demoWait = 20 * time.Second

// addDemo adds the demo backend to a configuration without backends, at
// start and at every reload alike (a reload of a file without backends
// keeps the demo rather than removing it); it reports whether it did.
func addDemo(cfg *config.Config) (bool, error) {
	if len(cfg.Backends) > 0 {
		return false, nil
	}
	b, err := demoBackend()
	if err != nil {
		return false, err
	}
	cfg.Backends = append(cfg.Backends, b)
	return true, nil
}

// demoBackend is the fixture behind this executable's own proxy.
func demoBackend() (config.BackendConfig, error) {
	self, err := os.Executable()
	if err != nil {
		return config.BackendConfig{}, fmt.Errorf("the demo backend needs this executable's path: %w", err)
	}
	return config.BackendConfig{Name: demoName, Kind: upstream.KindProcess, Command: []string{self, "fixture"},
		Prefix: config.NoPrefix}, nil
}

// waitDemo waits, bounded, until the gateway is ready (the demo backend
// up), so that the commands printed next work at once.
func waitDemo(ctx context.Context, gw *gateway.Gateway, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, demoWait)
	defer cancel()
	if !gw.WaitReady(ctx) {
		log.Warn("the demo backend is not up yet; its tools appear when it is (see /readyz)")
	}
}

// inspectorPackage is the MCP Inspector the printed lines run, pinned: npx
// on Node 20 resolves the bare name to 0.15.0, which takes no --header, and
// every later version declares Node 22 yet runs on 20 (--loglevel=error
// hides npm's engine warnings). A test runs the printed line with the
// machine's own npx.
const inspectorPackage = "@modelcontextprotocol/inspector@2.12.0"

// inspectorCommand is how the printed lines start the Inspector.
const inspectorCommand = "npx -y --loglevel=error " + inspectorPackage

// printInspector prints the MCP Inspector's command line (its CLI) and
// how to fill in its web UI, for url with the bearer token (none when
// authentication is off).
func printInspector(out io.Writer, url, token string) {
	header := ""
	if token != "" {
		header = fmt.Sprintf(" --header \"Authorization: Bearer %s\"", token)
	}
	fmt.Fprintf(out, "inspect:  %s --cli %s --transport http%s --method tools/list\n", inspectorCommand, url, header)
	fmt.Fprintf(out, "          or its web UI: %s, then transport Streamable HTTP, URL %s", inspectorCommand, url)
	if token != "" {
		fmt.Fprintf(out, ",\n          and a custom header Authorization with the value \"Bearer %s\"", token)
	}
	fmt.Fprintln(out)
}
