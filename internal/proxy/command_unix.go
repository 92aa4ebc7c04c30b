//go:build unix

// command_unix.go starts a supervised server where stdio.Command exists:
// on Unix, where the server's process group can be stopped with it.

package proxy

import (
	"context"

	"github.com/mcpgate/mcpgate/stdio"
)

func startCommand(ctx context.Context, name string, args []string, opts stdio.CommandOptions) (*stdio.Conn, error) {
	return stdio.Command(ctx, name, args, opts)
}
