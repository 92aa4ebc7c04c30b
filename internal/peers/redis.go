// redis.go starts a real Redis server for a test: Debian's redis-server
// (scripts/peers.sh installs it when it is missing), on a free loopback
// port, with no persistence and a temporary folder, stopped when the test
// ends.

package peers

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Redis is a running server.
type Redis struct {
	Addr string // 127.0.0.1:PORT
}

// URL is the server's address as mcpgate's configuration takes it.
func (r Redis) URL() string { return "redis://" + r.Addr + "/0" }

// ErrNoRedis is RunRedis's error when Redis is not installed.
var ErrNoRedis = errors.New("redis-server is not installed (scripts/peers.sh installs Debian's redis-server)")

// StartRedis starts a server for t, or skips t (fails it when
// MCPGATE_REQUIRE_PEERS is set) when Redis is not installed. It is stopped
// when t ends.
func StartRedis(t testing.TB) Redis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("MCPGATE_REQUIRE_PEERS") != "" {
			t.Fatal(ErrNoRedis)
		}
		t.Skip(ErrNoRedis)
	}
	r, stop, err := RunRedis()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return r
}

// RunRedis starts a server in a temporary folder; stop stops it and
// removes the folder.
func RunRedis() (r Redis, stop func(), err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return r, nil, ErrNoRedis
	}
	dir, err := os.MkdirTemp("", "mcpgate-redis-")
	if err != nil {
		return r, nil, err
	}
	port, err := freePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return r, nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", filepath.Join(dir, "server.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return r, nil, fmt.Errorf("redis-server: %w", err)
	}
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}
	r = Redis{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if pong(r.Addr) {
			return r, stop, nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			stop()
			return r, nil, fmt.Errorf("redis is not ready on %s\n%s", r.Addr, log)
		}
		time.Sleep(20 * time.Millisecond) // polling a server that is starting
	}
}

// pong reports whether a Redis server answers PING at addr.
func pong(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
