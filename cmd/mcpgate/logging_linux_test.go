package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// openPTY opens a pseudo-terminal pair without cgo: /dev/ptmx, unlocked,
// and the /dev/pts device it names.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { _ = master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no /dev/pts device for the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { _ = slave.Close() })
	return master, slave
}

// On a terminal, auto logs text (and json, when asked, still JSON).
func TestLogFormatAutoIsTextOnATerminal(t *testing.T) {
	_, slave := openPTY(t)
	if _, ok := logHandler(logAuto, slave, slog.LevelInfo).(*slog.TextHandler); !ok {
		t.Error("auto on a terminal is not text")
	}
	if _, ok := logHandler(logJSON, slave, slog.LevelInfo).(*slog.JSONHandler); !ok {
		t.Error("json on a terminal is not JSON")
	}
}

// The built binary, its stderr a terminal, logs text by default.
func TestLogFormatOfTheBinaryOnATerminal(t *testing.T) {
	master, slave := openPTY(t)
	bin := testkit.Mcpgate(t)
	cmd := exec.Command(bin, "serve", "--no-auth", "--listen", "127.0.0.1:0", "--store", filepath.Join(t.TempDir(), "m.db"))
	cmd.Env = cliEnv(t)
	cmd.Stderr = slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child holds the terminal now; once it exits, reading the master
	// ends (EIO) only if no one else holds it open.
	_ = slave.Close()
	out := &testkit.Output{} // what the terminal shows
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(out, master) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		exited <- <-exited
		<-copied
	})

	line := waitStderrLine(t, out, "serving")
	if !strings.Contains(line, "level=INFO msg=serving") || strings.HasPrefix(line, "{") {
		t.Errorf("log line on a terminal %q, want slog's text", line)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("serve exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit after an interrupt")
	}
}
