// supervisor.go runs a stdio MCP server the proxy starts itself
// (docs/wire.md §3.5, §4). It is started on first need and restarted with
// backoff when it dies. It is restarted at once with new values when
// secrets are fed: for stdio, the environment is the only way in. One
// process carries one MCP session, so each process is handed to at most one
// session (Dial), and a session that ends takes its process with it; the
// restart is the next session's.

package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
)

// SupervisorOptions configures a Supervisor.
type SupervisorOptions struct {
	// Env is the environment before secrets are added (nil: the proxy's).
	// Secrets override entries of the same name.
	Env []string
	// Logger receives the supervisor's lines and the server's stderr.
	Logger  *slog.Logger
	Backoff upstream.Backoff
	// GracePeriod is passed to stdio.Command (how long a stop waits).
	GracePeriod time.Duration
}

// Supervisor keeps one stdio server running.
type Supervisor struct {
	command []string
	name    string
	opts    SupervisorOptions
	log     *slog.Logger

	ctx    context.Context // the supervisor's life
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has ended
	kick   chan struct{} // cuts a backoff wait short

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every change below
	secrets []string      // NAME=value; never logged
	version int           // bumped by every Feed
	child   *child        // the running process; nil between lives
	last    attempt       // the latest start attempt
	down    *downtime     // set while a restart waits out its backoff
	starts  int
	running bool // the loop was started
	closed  bool
}

// attempt is the outcome of one start, with the secrets version it used.
type attempt struct {
	version int
	err     error
}

// downtime is a restart waiting out its backoff, and why.
type downtime struct {
	reason string
	until  time.Time
}

// maxDialWait is the longest pending restart Dial waits for. A server that
// crashed once is back in a moment, and the exchange goes through. An
// exchange on a server in a crash loop hears at once why it cannot run.
const maxDialWait = time.Second

// NewSupervisor returns a supervisor of command (name and arguments). No
// process starts until the first Dial or Feed.
func NewSupervisor(command []string, opts SupervisorOptions) (*Supervisor, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, fmt.Errorf("proxy: supervisor: empty command")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Backoff = opts.Backoff.WithDefaults()
	s := &Supervisor{
		command: command,
		name:    filepath.Base(command[0]),
		opts:    opts,
		log:     opts.Logger,
		done:    make(chan struct{}),
		kick:    make(chan struct{}, 1),
		changed: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Dial returns a connection to a server process no session has used,
// starting one if none runs, or waiting (within ctx) for the restart of
// one that died. A process still held by an earlier session is stopped:
// a new session needs a fresh process. Dial does not wait when the last
// start failed (the command cannot run) or when the restart is more than
// maxDialWait away: it says why instead.
//
// A fresh process is handed out even if it has already exited again; the
// session's initialize then fails with its exit status, which says more
// than any wait would.
func (s *Supervisor) Dial(ctx context.Context) (mcp.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runLocked()
	for {
		if s.closed {
			return nil, ErrClosed
		}
		c := s.child
		switch {
		case c != nil && !c.claimed && !c.stopping():
			c.claimed = true
			return &childConn{Conn: c.conn, c: c}, nil
		case c != nil && c.claimed && c.running():
			c.replaceLocked()
		case c == nil && s.last.err != nil:
			return nil, s.last.err
		case c == nil && s.down != nil && time.Until(s.down.until) > maxDialWait:
			return nil, fmt.Errorf("proxy: the upstream server %s; restarting in %v",
				s.down.reason, time.Until(s.down.until).Round(time.Millisecond))
		}
		if err := s.waitLocked(ctx); err != nil {
			return nil, err
		}
	}
}

// Feed makes values the server's secrets: the running process (if any) is
// stopped and a new one started with them in its environment, without
// backoff. Feed returns once that process has started, or with the reason
// it could not; the error names no value.
func (s *Supervisor) Feed(ctx context.Context, values map[string]string) error {
	env, err := secretEnv(values)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.secrets = env
	s.version++
	want := s.version
	if s.child != nil {
		s.child.replaceLocked()
	}
	s.runLocked()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	for s.last.version < want {
		if s.closed {
			return ErrClosed
		}
		if err := s.waitLocked(ctx); err != nil {
			return err
		}
	}
	return s.last.err
}

// Starts counts the processes started.
func (s *Supervisor) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// Close stops the server and the supervisor.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	s.closed = true
	running := s.running
	s.broadcastLocked()
	s.mu.Unlock()
	s.cancel()
	if running {
		<-s.done
	}
	return nil
}

// waitLocked waits for the next change, releasing s.mu meanwhile.
func (s *Supervisor) waitLocked(ctx context.Context) error {
	ch := s.changed
	s.mu.Unlock()
	defer s.mu.Lock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Supervisor) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Supervisor) runLocked() {
	if !s.running && !s.closed {
		s.running = true
		go s.loop()
	}
}
