// root.go is the command tree.

package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "mcpgate",
		Short:         "Run MCP tool servers safely and fast",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(serveCommand(), proxyCommand(), callCommand(), fixtureCommand(), tokenCommand(), auditCommand())
	return root
}

// newLogger logs to stderr (stdout may be an MCP stream): text on a
// terminal, JSON otherwise.
func newLogger(level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}
