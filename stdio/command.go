//go:build unix

// command.go starts a backend MCP server as a child process and connects
// to it. The child gets its own process group, so that everything it
// spawns (a shell, npx, a language server) can be stopped with it.

package stdio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// Command starts name with args and returns a Conn to it: the child's
// stdout carries the protocol, its stdin receives our messages, and each
// line of its stderr is logged with the backend's name. When ctx ends, the
// Conn is closed (and the child stopped) as by Close.
func Command(ctx context.Context, name string, args []string, opts CommandOptions) (*Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults(name)
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = opts.Env, opts.Dir
	cmd.SysProcAttr = ChildAttr()

	p, err := openPipes()
	if err != nil {
		return nil, fmt.Errorf("stdio: start %s: %w", opts.Name, err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.childIn, p.childOut, p.childErr
	err = cmd.Start()
	p.closeChildEnds() // the child has its own copies now
	if err != nil {
		p.closeParentEnds()
		return nil, fmt.Errorf("stdio: start %s: %w", opts.Name, err)
	}

	c := newConn(p.stdout, p.stdin, opts.MaxLineBytes, opts.Logger)
	c.proc = startProcess(cmd, p.stderr, opts)
	go c.closeWhenDone(ctx)
	return c, nil
}

// pipes are the three standard streams of a child: our ends and its ends.
// They are *os.File pipes rather than exec's StdoutPipe, whose Wait would
// close our end of stdout while lines may still be unread.
type pipes struct {
	stdin, stdout, stderr       *os.File // ours
	childIn, childOut, childErr *os.File // the child's
}

func openPipes() (*pipes, error) {
	var p pipes
	var errs [3]error
	p.childIn, p.stdin, errs[0] = os.Pipe()
	p.stdout, p.childOut, errs[1] = os.Pipe()
	p.stderr, p.childErr, errs[2] = os.Pipe()
	if err := errors.Join(errs[:]...); err != nil {
		p.closeChildEnds()
		p.closeParentEnds()
		return nil, err
	}
	return &p, nil
}

func (p *pipes) closeChildEnds() { closeFiles(p.childIn, p.childOut, p.childErr) }

func (p *pipes) closeParentEnds() { closeFiles(p.stdin, p.stdout, p.stderr) }

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}
