//go:build unix

// supervisor_test.go pins the supervisor against real child processes: a
// server that exits is started again, each process serves one session, a
// command that cannot run is reported at once, and the restart delay
// doubles while the server keeps dying young.

package proxy

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
)

func newSupervisor(t *testing.T, opts SupervisorOptions, extraEnv ...string) *Supervisor {
	t.Helper()
	cmd, env := childCommand(extraEnv...)
	if opts.Env == nil {
		opts.Env = env
	}
	s, err := NewSupervisor(cmd, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestTheSupervisorRestartsAServerThatExits(t *testing.T) {
	ctx := testCtx(t)
	path, env := startsFile(t)
	s := newSupervisor(t, SupervisorOptions{Backoff: upstream.Backoff{Base: time.Millisecond}}, env)

	conn, err := s.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := conn.(*childConn)
	initialize(t, conn) // the child has recorded its start
	if err := syscall.Kill(first.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.Done()
	_ = first.Close()

	conn, err = s.Dial(ctx) // waits for the restart
	if err != nil {
		t.Fatal(err)
	}
	defer initialize(t, conn).Close()
	if second := conn.(*childConn); second.Pid() == first.Pid() {
		t.Error("Dial returned the dead process")
	}
	if n, starts := countLines(t, path), s.Starts(); n != 2 || starts != 2 {
		t.Errorf("started %d times (Starts() = %d), want 2", n, starts)
	}
}

// initialize starts a session on conn: once it answers, the child has
// recorded its start.
func initialize(t *testing.T, conn mcp.Conn) *mcp.Client {
	t.Helper()
	c := mcp.NewClient(conn, mcp.ClientOptions{})
	if _, err := c.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEachProcessServesOneSession(t *testing.T) {
	ctx := testCtx(t)
	s := newSupervisor(t, SupervisorOptions{})
	first, err := s.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := s.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	select {
	case <-first.(*childConn).Done():
	default:
		t.Error("the first session's process still runs beside the second's")
	}
	if first.(*childConn).Pid() == second.(*childConn).Pid() {
		t.Error("two sessions were given one process")
	}
}

func TestACommandThatCannotRunIsReportedAtOnce(t *testing.T) {
	ctx := testCtx(t)
	s, err := NewSupervisor([]string{"/nonexistent/mcp-server"}, SupervisorOptions{Backoff: upstream.Backoff{Base: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 { // the second attempt comes only after an hour: Dial does not wait for it
		if _, err := s.Dial(ctx); err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("Dial: %v, want the start failure", err)
		}
	}
	if err := s.Feed(ctx, map[string]string{"A": "b"}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Feed: %v, want the start failure", err)
	}
}

func TestAfterCloseNothingStarts(t *testing.T) {
	ctx := testCtx(t)
	path, env := startsFile(t)
	s := newSupervisor(t, SupervisorOptions{}, env)
	_ = s.Close()
	if _, err := s.Dial(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Dial after Close: %v", err)
	}
	if err := s.Feed(ctx, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Feed after Close: %v", err)
	}
	if n := countLines(t, path); n != 0 {
		t.Errorf("started %d times", n)
	}
}
