// Command mcpgate runs MCP tool servers safely and fast. Its subcommands
// are wired here and nowhere else: each builds its components from flags
// and runs them until interrupted.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgate:", err)
		os.Exit(1)
	}
}
