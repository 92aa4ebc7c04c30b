// logging.go is how every subcommand logs: log/slog to stderr, as stdout
// may be an MCP stream. It writes text for a person at a terminal, and JSON
// for anything else (a file, a pipe, a log collector), unless --log-format
// says which.

package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

// The values of --log-format.
const (
	logAuto = "auto"
	logText = "text"
	logJSON = "json"
)

const logFormatFlag = "log-format"

// addLogFormatFlag gives every subcommand --log-format, checked before the
// subcommand runs.
func addLogFormatFlag(root *cobra.Command) {
	root.PersistentFlags().String(logFormatFlag, logAuto, "log format on stderr: text, json, or auto (text on a terminal, JSON otherwise)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		_, err := logFormat(cmd)
		return err
	}
}

// logFormat is the command's --log-format.
func logFormat(cmd *cobra.Command) (string, error) {
	f, err := cmd.Flags().GetString(logFormatFlag)
	if err != nil { // a command outside the tree (a test's own): auto
		return logAuto, nil
	}
	switch f {
	case logAuto, logText, logJSON:
		return f, nil
	}
	return "", fmt.Errorf("--%s: %q is not text, json or auto", logFormatFlag, f)
}

// logHandler writes to out in format; auto is text when out is a terminal.
// A character device is not enough to be one: /dev/null is one too, and
// a service whose stderr goes there is no person reading.
func logHandler(format string, out *os.File, level slog.Level) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	if format == logText || (format == logAuto && isTerminal(out)) {
		return slog.NewTextHandler(out, opts)
	}
	return slog.NewJSONHandler(out, opts)
}

func isTerminal(f *os.File) bool {
	fd := f.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}
