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
	addLogFormatFlag(root)
	return root
}

// newLogger logs to stderr (stdout may be an MCP stream) in the format
// --log-format asks: text on a terminal, JSON otherwise, by default.
func newLogger(cmd *cobra.Command, level slog.Level) *slog.Logger {
	format, err := logFormat(cmd)
	if err != nil { // refused before the command ran
		format = logAuto
	}
	return slog.New(logHandler(format, os.Stderr, level))
}
