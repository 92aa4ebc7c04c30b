//go:build unix

// process.go supervises a backend's child process: it notices when the
// process exits, stops it politely and then firmly, and makes sure nothing
// it spawned outlives it — a backend's process group never outlives its
// leader.

package stdio

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/internal/tick"
)

// process is a running backend.
type process struct {
	cmd   *exec.Cmd
	pid   int // also the process group id
	log   *slog.Logger
	grace time.Duration

	stderr     *os.File
	stderrDone chan struct{} // closed when stderr has been read to its end

	mu      sync.Mutex
	reaped  bool // the pid may belong to someone else now: never signal it
	closing atomic.Bool

	exited  chan struct{} // closed once the process is reaped
	exitErr error         // set before exited is closed
}

func startProcess(cmd *exec.Cmd, stderr *os.File, opts CommandOptions) *process {
	p := &process{
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		log:        opts.Logger,
		grace:      opts.GracePeriod,
		stderr:     stderr,
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	go p.logStderr()
	go p.supervise()
	return p
}

// supervise waits for the leader to exit, kills what is left of its group,
// and reaps it.
func (p *process) supervise() {
	err := reap(p.cmd, func() {
		// The leader had its chance to stop its own children; whatever is
		// left in its group now is an orphan.
		p.mu.Lock()
		p.signalLocked(syscall.SIGKILL)
		p.reaped = true
		p.mu.Unlock()
	})
	if p.closing.Load() {
		p.log.Debug("backend exited", "pid", p.pid, "err", err)
	} else {
		p.log.Warn("backend exited", "pid", p.pid, "err", err)
	}
	p.exitErr = err
	close(p.exited)
}

// shutdown stops the process once its stdin is closed: it waits a grace
// period for a clean exit, then sends the group SIGTERM, waits again, and
// sends SIGKILL. It returns once the process is reaped.
func (p *process) shutdown() {
	p.closing.Store(true)
	if p.awaitExit(p.grace) {
		return
	}
	p.log.Info("backend still running after stdin closed; sending SIGTERM", "pid", p.pid)
	p.signal(syscall.SIGTERM)
	if p.awaitExit(p.grace) {
		return
	}
	p.log.Warn("backend still running after SIGTERM; sending SIGKILL", "pid", p.pid)
	p.signal(syscall.SIGKILL)
	<-p.exited
}

// awaitExit reports whether the process exits within d.
func (p *process) awaitExit(d time.Duration) bool { return !tick.Sleep(d, p.exited) }

// signal sends sig to the whole process group, unless the leader is reaped.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signalLocked(sig)
}

func (p *process) signalLocked(sig syscall.Signal) {
	if p.reaped {
		return
	}
	if err := syscall.Kill(-p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		p.log.Warn("signalling backend failed", "pid", p.pid, "signal", sig.String(), "err", err)
	}
}

// logStderr logs each line the process writes to stderr.
func (p *process) logStderr() {
	defer close(p.stderrDone)
	lines := newLineReader(p.stderr, stderrMaxLineBytes)
	for {
		line, err := lines.Next()
		switch {
		case errors.Is(err, ErrLineTooLong):
			p.log.Warn("stderr line too long", "limit", stderrMaxLineBytes)
		case err != nil:
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				p.log.Debug("stderr read failed", "err", err)
			}
			return
		default:
			p.log.LogAttrs(context.Background(), slog.LevelInfo, "stderr", LineAttr(line))
		}
	}
}

// stopLogging lets the last stderr lines (a crash report, say) reach the
// log, but gives up after a grace period: a stray process that escaped the
// group could hold the pipe open for ever.
func (p *process) stopLogging() {
	if !p.awaitStderr(p.grace) {
		_ = p.stderr.Close()
		<-p.stderrDone
	}
	_ = p.stderr.Close()
}

func (p *process) awaitStderr(d time.Duration) bool { return !tick.Sleep(d, p.stderrDone) }
