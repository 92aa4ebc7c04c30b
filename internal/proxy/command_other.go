//go:build !unix

// command_other.go stands in for command_unix.go where stdio.Command is
// not offered: a stdio upstream fails to start, saying why, and the rest
// of the proxy still builds.

package proxy

import (
	"context"
	"errors"

	"github.com/mcpgate/mcpgate/stdio"
)

func startCommand(context.Context, string, []string, stdio.CommandOptions) (*stdio.Conn, error) {
	return nil, errors.New("a stdio upstream needs a Unix system")
}
