// redis.go starts a real Redis server for a test: Debian's redis-server
// (scripts/peers.sh installs it when it is missing), on a free loopback
// port, with no persistence and a temporary folder, stopped when the test
// ends.

package peers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a running server.
type RedisServer struct {
	Addr string // 127.0.0.1:PORT
}

// URL is the server's address as mcpgate's configuration takes it.
func (r RedisServer) URL() string { return "redis://" + r.Addr + "/0" }

// ErrNoRedis is RunRedis's error when Redis is not installed.
var ErrNoRedis = errors.New("redis-server is not installed (scripts/peers.sh installs Debian's redis-server)")

// HaveRedis reports whether Redis is installed.
func HaveRedis() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil
}

// StartRedis starts a server for t, or skips t (fails it when
// MCPGATE_REQUIRE_PEERS is set) when Redis is not installed. It is stopped
// when t ends.
func StartRedis(t testing.TB) RedisServer {
	t.Helper()
	if !HaveRedis() {
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
func RunRedis() (r RedisServer, stop func(), err error) {
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
	r = RedisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no")
	stop, err = spawn("redis-server", cmd, dir, func() bool { return pong(r.Addr) })
	return r, stop, err
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

// CommandCalls is how many times the server has run each command (INFO
// commandstats), by its lower-case name: a command a script runs inside
// the server is counted as well as the script (evalsha).
func (r RedisServer) CommandCalls(ctx context.Context) (map[string]int64, error) {
	c := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer c.Close()
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	calls := map[string]int64{}
	for line := range strings.Lines(info) {
		// cmdstat_evalsha:calls=12,usec=...
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, ",")
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redis: INFO commandstats: %q", line)
		}
		calls[strings.TrimPrefix(name, "cmdstat_")] = v
	}
	return calls, nil
}
