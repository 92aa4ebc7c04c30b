// stdio.go serves an MCP server on the process's own stdin and stdout.

package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/stdio"
)

// serveStdio serves one session on stdin/stdout until stdin ends or ctx
// is cancelled. Logs go to stderr only: stdout is the protocol.
func serveStdio(ctx context.Context, srv *mcp.Server, log *slog.Logger, sessionless bool) error {
	return stdio.Serve(ctx, srv, os.Stdin, os.Stdout, stdio.Options{
		Logger:      log,
		Identity:    mcp.Identity{Subject: "stdio"},
		Sessionless: sessionless,
	})
}
