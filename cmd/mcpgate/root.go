// root.go is the command tree.

package main

import (
	"fmt"
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
	root.AddCommand(serveCommand(), proxyCommand(), callCommand(), fixtureCommand(), tokenCommand(), oauthCommand(), auditCommand(), catalogueCommand(), credentialsCommand())
	addLogFormatFlag(root)
	usageHints(root)
	return root
}

// usageHints makes a mistyped flag say where the usage is: errors are
// printed without usage (SilenceUsage), so each names the --help that has
// it. Subcommands inherit it (mcpgate call keeps its own, for its exit
// statuses).
func usageHints(root *cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w\nrun '%s --help' for usage", err, c.CommandPath())
	})
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
