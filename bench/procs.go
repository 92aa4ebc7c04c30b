// procs.go starts the processes under test — each a separate process on a
// free loopback port — and stops every one of them at the end, whatever
// happened in between.

package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one started process.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // after done
}

// procs is every process a run started, stopped together.
type procs struct {
	mu   sync.Mutex
	all  []*proc
	logs string // folder of the processes' stderr
}

// start runs argv as its own process group, its output into a log file.
func (ps *procs) start(name string, env []string, argv ...string) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.Create(filepath.Join(ps.logs, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	ps.mu.Lock()
	ps.all = append(ps.all, p)
	ps.mu.Unlock()
	return p, nil
}

// stop ends one process: SIGTERM to its group, SIGKILL after a grace.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// stopAll stops every process, the last started first.
func (ps *procs) stopAll() {
	ps.mu.Lock()
	all := ps.all
	ps.all = nil
	ps.mu.Unlock()
	for i := len(all) - 1; i >= 0; i-- {
		all[i].stop()
	}
}

// pid is the process's id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// freeAddr returns a loopback address nobody listens on now.
func freeAddr() (string, error) {
	a, err := freeAddrs(1)
	if err != nil {
		return "", err
	}
	return a[0], nil
}

// freeAddrs is n free loopback addresses, all different: each is held
// until all are found (freed one by one, the kernel may give the same
// port twice, and a gateway's listen and metrics.listen then collide).
func freeAddrs(n int) ([]string, error) {
	addrs := make([]string, n)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		addrs[i] = ln.Addr().String()
	}
	return addrs, nil
}

// rssBytes reads the process's resident set from /proc.
func rssBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) < 1 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmRSS line")
}
