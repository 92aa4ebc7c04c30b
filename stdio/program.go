//go:build unix

// program.go runs a program that does not speak MCP on its standard
// streams: a process backend's server and its proxy. It gets the care a
// Command's child gets: its own process group, its output logged line by
// line, and a stop that leaves nothing of the group behind.

package stdio

import (
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Program is a running program in its own process group.
type Program struct{ p *process }

// StartProgram starts argv with env in a new process group. Each line it
// writes to stdout or stderr is logged with log. grace is how long Stop
// waits after SIGTERM before SIGKILL.
func StartProgram(argv, env []string, log *slog.Logger, grace time.Duration) (*Program, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = ChildAttr()
	err = cmd.Start()
	_ = w.Close() // the child has its copy
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return &Program{startProcess(cmd, r, CommandOptions{Logger: log, GracePeriod: grace})}, nil
}

// Pid is the program's process id, which is also its process group's.
func (g *Program) Pid() int { return g.p.pid }

// Done is closed once the program has exited and been reaped.
func (g *Program) Done() <-chan struct{} { return g.p.exited }

// Err is why the program exited (nil for exit status 0); call it after
// Done is closed.
func (g *Program) Err() error { return g.p.exitErr }

// Stop ends the process group: SIGTERM, then SIGKILL after the grace
// period. It returns once the program is reaped and its last output
// logged.
func (g *Program) Stop() {
	p := g.p
	p.closing.Store(true)
	p.signal(syscall.SIGTERM)
	if !p.awaitExit(p.grace) {
		p.signal(syscall.SIGKILL)
		<-p.exited
	}
	p.stopLogging()
}
