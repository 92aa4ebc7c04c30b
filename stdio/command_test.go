//go:build linux

// command_test.go pins how a backend process is run and stopped: its whole
// process group goes with it, stderr reaches the log line by line, Close
// escalates from closing stdin to SIGTERM to SIGKILL, and a backend that
// dies on its own is noticed.

package stdio

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// becomeSubreaper makes this process the parent of orphaned descendants,
// so that a test can reap a grandchild and see its pid vanish instead of
// lingering as a zombie of some init that does not reap.
func becomeSubreaper(t *testing.T) {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Skipf("cannot become a child subreaper: %v", errno)
	}
}

// reapOrphan waits for pid, now our child, to die and reaps it.
func reapOrphan(t *testing.T, pid int) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wait for grandchild %d: %v", pid, err)
		}
	case <-time.After(waitLimit):
		t.Fatalf("grandchild %d still alive", pid)
	}
}

func TestCloseKillsTheWholeProcessGroup(t *testing.T) {
	becomeSubreaper(t)
	rec := newLogRecorder()
	// The shell leaves a sleeper behind and becomes the server.
	script := `sleep 1000 & echo "grandchild $!" >&2; exec "$0"`
	conn, err := Command(t.Context(), "/bin/sh", []string{"-c", script, os.Args[0]},
		CommandOptions{Name: "grouped", Env: childCommandEnv(), Logger: rec.logger()})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{})
	if _, err := c.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}

	attrs := rec.waitFor(t, "the grandchild's pid on stderr", stderrLine("grandchild "))
	if attrs["backend"] != "grouped" {
		t.Errorf("stderr logged with backend %q", attrs["backend"])
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(attrs["line"], "grandchild "))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("grandchild %d not running before Close: %v", pid, err)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	reapOrphan(t, pid)
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("grandchild %d after Close: kill(0) = %v, want ESRCH", pid, err)
	}
	if err := syscall.Kill(-conn.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process group %d after Close: kill(0) = %v, want ESRCH", conn.Pid(), err)
	}
}

// startShell runs script as a backend that never speaks MCP, and waits
// for it to say "ready" on stderr (after it has set up its traps).
func startShell(t *testing.T, script string, grace time.Duration) (*Conn, *logRecorder) {
	t.Helper()
	rec := newLogRecorder()
	conn, err := Command(t.Context(), "/bin/sh", []string{"-c", script},
		CommandOptions{Name: "shell", Logger: rec.logger(), GracePeriod: grace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	rec.waitFor(t, "ready", stderrLine("ready"))
	return conn, rec
}

func exitSignal(t *testing.T, err error) syscall.Signal {
	t.Helper()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("exit error %v is not an *exec.ExitError", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		t.Fatalf("process was not signalled: %v", err)
	}
	return ws.Signal()
}

func TestCloseEscalates(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   syscall.Signal
	}{
		{"a backend deaf to stdin gets SIGTERM", `echo ready >&2; exec sleep 1000`, syscall.SIGTERM},
		{"a backend ignoring SIGTERM gets SIGKILL", `trap "" TERM; echo ready >&2; exec sleep 1000`, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, _ := startShell(t, tt.script, 50*time.Millisecond)
			if err := conn.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-conn.Done():
			default:
				t.Fatal("Close returned before the process was reaped")
			}
			if sig := exitSignal(t, conn.ExitErr()); sig != tt.want {
				t.Errorf("ended by %v, want %v", sig, tt.want)
			}
		})
	}
}

func TestCloseDrainsOutputSoTheBackendCanExitCleanly(t *testing.T) {
	// The backend is still writing (more than a pipe holds) when we close;
	// it exits by itself once its output is read and its stdin ends.
	conn, _ := startShell(t, `echo ready >&2; yes '{"jsonrpc":"2.0","method":"x"}' | head -n 100000; exec cat >/dev/null`, waitLimit)
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := conn.ExitErr(); err != nil {
		t.Fatalf("backend did not exit cleanly: %v", err)
	}
}

func TestBackendExitingOnItsOwnIsNoticed(t *testing.T) {
	conn, rec := startShell(t, `echo ready >&2; echo "last words" >&2; exit 3`, DefaultGracePeriod)
	select {
	case <-conn.Done():
	case <-time.After(waitLimit):
		t.Fatal("Done not closed after the process exited")
	}
	var ee *exec.ExitError
	if err := conn.ExitErr(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit error %v, want exit status 3", err)
	}
	if _, err := conn.Read(t.Context()); !errors.Is(err, io.EOF) {
		t.Fatalf("Read after exit = %v, want io.EOF", err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	// Close lets stderr drain, so the last line is in the log by now.
	if _, ok, _ := rec.find(stderrLine("last words")); !ok {
		t.Error("the last stderr line was lost")
	}
}

func TestCommandStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := Command(ctx, "/bin/sh", []string{"-c", "exec cat >/dev/null"}, CommandOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-conn.Done():
	case <-time.After(waitLimit):
		t.Fatal("process still running after its context ended")
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(context.Background(), &jsonrpc.Message{Method: "m"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after close = %v, want ErrClosed", err)
	}
}

func TestCommandFailsToStartAMissingProgram(t *testing.T) {
	_, err := Command(t.Context(), "/nonexistent/mcp-server", nil, CommandOptions{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func TestCommandPassesEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	rec := newLogRecorder()
	conn, err := Command(t.Context(), "/bin/sh", []string{"-c", `echo "env=$MCP_TEST_VAR dir=$(pwd)" >&2; exec cat >/dev/null`},
		CommandOptions{Env: []string{"MCP_TEST_VAR=x1", "PATH=" + os.Getenv("PATH")}, Dir: dir, Logger: rec.logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	attrs := rec.waitFor(t, "env and dir on stderr", stderrLine("env="))
	if want := "env=x1 dir=" + dir; attrs["line"] != want {
		t.Errorf("child saw %q, want %q", attrs["line"], want)
	}
	if attrs["backend"] != "sh" {
		t.Errorf("default backend name %q, want the command's base name", attrs["backend"])
	}
}
