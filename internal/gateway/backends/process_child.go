//go:build unix

// process_child.go runs one process of a process backend: in its own
// process group (so that whatever it spawns ends with it), its stdout and
// stderr logged line by line with the backend's name, stopped politely and
// then firmly.

package backends

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/stdio"
)

// stopGrace is how long a process has to end after SIGTERM.
const stopGrace = 3 * time.Second

// child is a running process of a process backend.
type child struct {
	cmd     *exec.Cmd
	pid     int           // also its process group
	done    chan struct{} // closed once it has been reaped
	err     error         // set before done is closed
	logDone chan struct{} // closed once its output has been read to the end
}

// startChild starts argv with env in a new process group.
func startChild(argv []string, env []string, log *slog.Logger) (*child, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = stdio.ChildAttr()
	err = cmd.Start()
	_ = w.Close() // the child has its copy
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	c := &child{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{}), logDone: make(chan struct{})}
	go func() {
		defer close(c.logDone)
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		for sc.Scan() {
			log.LogAttrs(context.Background(), slog.LevelInfo, "backend output", stdio.LineAttr(sc.Bytes()))
		}
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// exitErr is why the process ended; call after done is closed.
func (c *child) exitErr() error {
	if c.err == nil {
		return errNoExitStatus
	}
	return c.err
}

// stop ends the process group: SIGTERM, then SIGKILL after stopGrace, and
// SIGKILL again for whatever of the group outlived its leader. It returns
// once the process is reaped and its output read to the end.
func (c *child) stop() {
	select {
	case <-c.done:
	default:
		_ = syscall.Kill(-c.pid, syscall.SIGTERM)
		t := time.NewTimer(stopGrace)
		select {
		case <-c.done:
			t.Stop()
		case <-t.C:
		}
	}
	// The group may outlive its leader (a shell's children); the leader is
	// reaped, but its pgid is not reused while any member lives.
	_ = syscall.Kill(-c.pid, syscall.SIGKILL) // ESRCH: nothing was left
	<-c.done
	<-c.logDone
}
