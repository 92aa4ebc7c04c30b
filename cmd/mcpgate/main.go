// Command mcpgate runs MCP tool servers safely and fast. Its subcommands
// are wired here and nowhere else: each builds its components from flags
// and runs them until interrupted.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := rootCommand().ExecuteContext(ctx)
	var status *exitStatus
	switch {
	case errors.As(err, &status):
		// A command whose exit status means something (mcpgate call).
		if status.err != nil {
			fmt.Fprintln(os.Stderr, "mcpgate:", status.err)
		}
		stop()
		os.Exit(status.code)
	case err != nil:
		fmt.Fprintln(os.Stderr, "mcpgate:", err)
		stop()
		os.Exit(1)
	}
}
