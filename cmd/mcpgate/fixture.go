// fixture.go is `mcpgate fixture`: the conformance fixture server over
// Streamable HTTP (/mcp) and legacy SSE (/sse, /messages), or over stdio.

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func fixtureCommand() *cobra.Command {
	var (
		listen    string
		stdio     bool
		stateless bool
		modern    bool
		asResults bool
		verbose   bool
	)
	cmd := &cobra.Command{
		Use:   "fixture",
		Short: "Serve the MCP conformance fixture",
		Long: "Serve the conformance fixture: every tool, resource, template and prompt the official MCP\n" +
			"conformance suite calls. Streamable HTTP at /mcp and legacy SSE at /sse, or stdio.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			level := slog.LevelInfo
			if verbose {
				level = slog.LevelDebug
			}
			log := newLogger(cmd, level)
			srv := fixture.New(fixture.Options{Logger: log, ValidationErrorsAsResults: asResults})
			ctx := cmd.Context()
			go fixture.Watch(ctx, srv, 3*time.Second)
			if stdio {
				return serveStdio(ctx, srv, log, modern)
			}
			// As a container's program (a process backend's), the
			// fixture listens where the container contract says.
			if port := os.Getenv("PORT"); port != "" && !cmd.Flags().Changed("listen") {
				listen = net.JoinHostPort("127.0.0.1", port)
			}
			return serveHTTP(ctx, listen, log, func(mux *http.ServeMux, o mcphttp.Options) func() {
				o.Stateless, o.Sessionless = stateless, modern
				streamable := mcphttp.NewHandler(srv, o)
				legacy := mcphttp.NewSSEHandler(srv, o)
				mux.Handle("/mcp", streamable)
				mux.Handle("/sse", legacy)
				mux.Handle(o.MessagesPath, legacy)
				return func() { streamable.Close(); legacy.Close() }
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:3000", "address to serve HTTP on (default 127.0.0.1:$PORT when PORT is set)")
	f.BoolVar(&stdio, "stdio", false, "serve one session on stdin/stdout instead of HTTP")
	f.BoolVar(&stateless, "stateless", false, "serve Streamable HTTP without sessions")
	f.BoolVar(&modern, "sessionless", true, "serve 2026-07-28 (sessionless) requests beside the 2025 era (--sessionless=false: the 2025 era only)")
	f.BoolVar(&asResults, "validation-errors-as-results", false, "answer schema violations with isError results instead of -32602")
	f.BoolVar(&verbose, "verbose", false, "log at debug level")
	return cmd
}

// serveHTTP listens on addr and serves the routes mount adds, with
// DNS-rebinding protection, until ctx ends.
func serveHTTP(ctx context.Context, addr string, log *slog.Logger, mount func(*http.ServeMux, mcphttp.Options) (closeAll func())) error {
	mux := http.NewServeMux()
	closeAll := mount(mux, mcphttp.Options{Logger: log, MessagesPath: "/messages"})
	defer closeAll()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mcpgate fixture: Streamable HTTP at http://%s/mcp, legacy SSE at http://%s/sse\n", ln.Addr(), ln.Addr())
	return serveUntilDone(ctx, ln, mcphttp.Guard(mux, mcphttp.GuardOptions{}), log, closeAll)
}
