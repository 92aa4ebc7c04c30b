// serve_demo.go is what `mcpgate serve` runs when no backend is
// configured: a backend named "demo" that is the conformance fixture
// (`mcpgate fixture`) started as a process backend behind `mcpgate proxy`
// — the whole chain a tool container would use, on one machine — with
// its tools under their own names (prefix off), so that the printed
// commands call test_simple_text as it is. And the lines that show how to
// connect the MCP Inspector.

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/mcpgate/mcpgate/config"
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
func demoBackend() (config.Backend, error) {
	self, err := os.Executable()
	if err != nil {
		return config.Backend{}, fmt.Errorf("the demo backend needs this executable's path: %w", err)
	}
	return config.Backend{Name: demoName, Kind: config.BackendProcess, Command: []string{self, "fixture"},
		Prefix: config.NoPrefix}, nil
}

// waitDemo waits, bounded, until the gateway says it is ready (the demo
// backend up), so that the commands printed next work at once. It asks
// the gateway's own /readyz, which needs no credential.
func waitDemo(ctx context.Context, h http.Handler, log *slog.Logger) {
	deadline := time.Now().Add(demoWait)
	for {
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/readyz", nil)
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			log.Warn("the demo backend is not up yet; its tools appear when it is", "readyz", rec.Body.String())
			return
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// printInspector prints the MCP Inspector's command line (its CLI) and
// how to fill in its web UI, for url with the bearer token (none when
// authentication is off).
func printInspector(out io.Writer, url, token string) {
	header := ""
	if token != "" {
		header = fmt.Sprintf(" --header \"Authorization: Bearer %s\"", token)
	}
	fmt.Fprintf(out, "inspect:  npx @modelcontextprotocol/inspector --cli %s --transport http%s --method tools/list\n", url, header)
	fmt.Fprintf(out, "          or the web UI: npx @modelcontextprotocol/inspector, then Transport Type \"Streamable HTTP\", URL %s", url)
	if token != "" {
		fmt.Fprintf(out, ",\n          Authentication: header Authorization, value \"Bearer %s\"", token)
	}
	fmt.Fprintln(out)
}
