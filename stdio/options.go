// options.go is the one place the stdio transport is configured and
// defaulted, for both its server end (Serve) and its client end (Command).

package stdio

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

const (
	// DefaultMaxLineBytes bounds one message, as the HTTP transports bound
	// a body: large enough for any sane payload, small enough that a peer
	// cannot make us buffer without limit.
	DefaultMaxLineBytes = 4 << 20

	// DefaultGracePeriod is how long Close waits after each step (closing
	// stdin, then SIGTERM) before the next, harsher one.
	DefaultGracePeriod = 2 * time.Second

	// stderrMaxLineBytes bounds one logged stderr line of a backend.
	stderrMaxLineBytes = 64 << 10
)

// Options configures Serve.
type Options struct {
	// Identity is the principal the session belongs to. stdio has no
	// authentication of its own: whoever started the process is trusted,
	// and configuration says who that is and with which role.
	Identity mcp.Identity
	// Logger receives the transport's logs (default: discard). It must not
	// write to the protocol stream.
	Logger *slog.Logger
	// MaxLineBytes bounds one incoming message (default 4 MiB).
	MaxLineBytes int
	// Sessionless also serves 2026-07-28 requests (their _meta names
	// the revision) beside the session (experimental; see
	// mcp.Server.ServeSessionless). A refusal is answered as an error.
	Sessionless bool
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	return o
}

// CommandOptions configures Command.
type CommandOptions struct {
	// Name identifies the backend in log lines (default: the command's base
	// name).
	Name string
	// NameInLogger says Logger already names the backend (a gateway's
	// backend logger does): Name is then not added to its lines again.
	NameInLogger bool
	// Env is the child's environment; nil inherits ours, as in os/exec.
	Env []string
	// Dir is the child's working directory ("" for ours).
	Dir string
	// Logger receives the child's stderr, one record per line, and the
	// transport's own logs (default: discard).
	Logger *slog.Logger
	// GracePeriod is how long Close waits for the child to exit after
	// closing its stdin, and again after SIGTERM, before escalating
	// (default 2s).
	GracePeriod time.Duration
	// MaxLineBytes bounds one incoming message (default 4 MiB).
	MaxLineBytes int
}

func (o CommandOptions) withDefaults(command string) CommandOptions {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// The name goes on the logger once, so that no line carries it
	// twice; NameInLogger says the caller's logger names it already.
	if !o.NameInLogger {
		if o.Name == "" {
			o.Name = filepath.Base(command)
		}
		o.Logger = o.Logger.With("backend", o.Name)
	}
	if o.GracePeriod <= 0 {
		o.GracePeriod = DefaultGracePeriod
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	return o
}
