// haproxy.go starts a real HAProxy for a test: Debian's haproxy
// (scripts/peers.sh installs it when it is missing), in front of the given
// loopback servers, balancing round-robin with no stickiness, on a free
// loopback port, stopped when the test ends.

package peers

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// HAProxy is a running load balancer.
type HAProxy struct {
	Addr string // 127.0.0.1:PORT
}

// URL is the balancer's base URL.
func (h HAProxy) URL() string { return "http://" + h.Addr }

// ErrNoHAProxy is RunHAProxy's error when HAProxy is not installed.
var ErrNoHAProxy = errors.New("haproxy is not installed (scripts/peers.sh installs Debian's haproxy)")

func haproxyBin() string {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
		return "/usr/sbin/haproxy"
	}
	return ""
}

// HaveHAProxy reports whether HAProxy is installed.
func HaveHAProxy() bool { return haproxyBin() != "" }

// StartHAProxy balances over servers (host:port each) for t, or skips t
// (fails it when MCPGATE_REQUIRE_PEERS is set) when HAProxy is not
// installed.
func StartHAProxy(t testing.TB, servers ...string) HAProxy {
	t.Helper()
	if !HaveHAProxy() {
		if os.Getenv("MCPGATE_REQUIRE_PEERS") != "" {
			t.Fatal(ErrNoHAProxy)
		}
		t.Skip(ErrNoHAProxy)
	}
	h, stop, err := RunHAProxy(servers...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return h
}

// RunHAProxy starts a balancer over servers in a temporary folder.
//
// Each request goes to the next server in turn (balance roundrobin, and
// http-server-close so that a client's kept-alive connection does not pin
// it to one replica). A server that refuses connections is retried on
// another (retries, redispatch); one that is down is found by a health
// check of /readyz twice a second. Streams may stay open for minutes.
func RunHAProxy(servers ...string) (h HAProxy, stop func(), err error) {
	bin := haproxyBin()
	if bin == "" {
		return h, nil, ErrNoHAProxy
	}
	dir, err := os.MkdirTemp("", "mcpgate-haproxy-")
	if err != nil {
		return h, nil, err
	}
	port, err := freePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return h, nil, err
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, `global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 10m
    timeout server 10m
    timeout tunnel 10m
    option http-server-close
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response
frontend mcp
    bind 127.0.0.1:%d
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1
    default-server inter 500ms fall 1 rise 1
`, port)
	for i, s := range servers {
		fmt.Fprintf(&cfg, "    server r%d %s check\n", i, s)
	}
	cfgPath := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return h, nil, err
	}
	if out, err := exec.Command(bin, "-c", "-q", "-f", cfgPath).CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return h, nil, fmt.Errorf("haproxy -c: %w\n%s", err, out)
	}
	h = HAProxy{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	stop, err = spawn("haproxy", exec.Command(bin, "-db", "-f", cfgPath), dir, func() bool { return accepts(h.Addr) })
	return h, stop, err
}
