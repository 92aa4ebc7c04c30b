//go:build unix

// refserver.go runs the conformance suite's reference server on a free
// loopback port, for tests and for the benchmark harness alike.

package peers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// FindRefServer is the reference server when scripts/peers.sh installed it.
func FindRefServer() (RefServer, bool) {
	p, ok := Find()
	if !ok {
		return RefServer{}, false
	}
	dir := filepath.Join(filepath.Dir(p.Dir), "refserver")
	for _, f := range []string{"everything-server.ts", "loopback.cjs", filepath.Join("node_modules", "tsx", "package.json")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return RefServer{}, false
		}
	}
	return RefServer{Dir: dir, Node22: p.Node22}, true
}

// Start runs the server on a free loopback port until stop (which ends
// its process group) and returns its MCP URL once it says it is running;
// ctx bounds the wait.
func (r RefServer) Start(ctx context.Context) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(r.Node22, "--require", "./loopback.cjs", "--import", "tsx", "everything-server.ts")
	cmd.Dir, cmd.Env = r.Dir, append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "running on") {
				close(up)
				break
			}
		}
		for sc.Scan() { // keep the pipe drained
		}
	}()
	select {
	case <-up:
		return fmt.Sprintf("http://127.0.0.1:%d/mcp", port), stop, nil
	case <-ctx.Done():
		stop()
		return "", nil, errors.New("the reference server did not start")
	}
}
