// process.go is the process kind: a local stand-in for a tool container.
// The gateway starts the program with PORT set to a free loopback port,
// and `mcpgate proxy` beside it relaying http://127.0.0.1:PORT/mcp on
// another free loopback port; once both accept, the backend is a proxy
// backend on that proxy. Closing the connection ends both process groups,
// and either process ending ends the connection, so Backend's restart loop
// restarts the pair — a fresh proxy for a fresh program.

package backends

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/stdio"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// processConn is the wire connection of a process backend and the two
// processes it stands on.
type processConn struct {
	*wiremcp.Conn
	program, proxy *stdio.Program
	watchDone      chan struct{}
}

// startProcess starts the program and its proxy, waits for both to
// accept (bounded by StartTimeout), and begins the proxy.
// env is the spec's environment for the program (with a principal's
// credential, for a per_user backend).
func (b *Backend) startProcess(ctx context.Context, specEnv []string) (_ *processConn, err error) {
	s := b.spec
	sctx, cancel := context.WithTimeout(ctx, b.opts.StartTimeout)
	defer cancel()
	programPort, err := freePort()
	if err != nil {
		return nil, err
	}
	proxyPort, err := freePort()
	if err != nil {
		return nil, err
	}
	proxyCmd := s.ProxyCommand
	if len(proxyCmd) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding mcpgate for the proxy: %w", err)
		}
		proxyCmd = []string{self, "proxy"}
	}
	programAddr := net.JoinHostPort("127.0.0.1", programPort)
	proxyAddr := net.JoinHostPort("127.0.0.1", proxyPort)

	env := append(append(os.Environ(), specEnv...), "PORT="+programPort)
	// The pairs' ports, free ones for the proxy to listen on and the
	// program to be told; "" turns a pair the backend has no use for off.
	pairAddr := func(used bool) (string, error) {
		if !used {
			return "", nil
		}
		port, err := freePort()
		return net.JoinHostPort("127.0.0.1", port), err
	}
	pgListen, err := pairAddr(s.Postgres != "")
	if err != nil {
		return nil, err
	}
	daemonListen, err := pairAddr(s.Daemon != "")
	if err != nil {
		return nil, err
	}
	if pgListen != "" {
		env = append(env, "MCPGATE_POSTGRES_ADDR="+pgListen)
	}
	if daemonListen != "" {
		env = append(env, "MCPGATE_DAEMON_URL=ws://"+daemonListen+"/daemon")
	}
	program, err := stdio.StartProgram(s.Command, env, b.log.With("process", "program"), stopGrace)
	if err != nil {
		return nil, fmt.Errorf("starting the program: %w", err)
	}
	defer func() {
		if err != nil {
			program.Stop()
		}
	}()
	argv := append(append([]string(nil), proxyCmd...),
		"--listen", proxyAddr, "--upstream", "http://"+programAddr+"/mcp", "--postgres-listen="+pgListen, "--daemon-listen="+daemonListen)
	if s.Era != mcp.EraAuto {
		argv = append(argv, "--upstream-era", string(s.Era)) // what the proxy speaks to the program
	}
	if s.KeepAlive != 0 {
		argv = append(argv, "--keepalive", max(s.KeepAlive, 0).String())
	}
	if s.KeepAliveTimeout != 0 {
		argv = append(argv, "--keepalive-timeout", s.KeepAliveTimeout.String())
	}
	proxy, err := stdio.StartProgram(argv, os.Environ(), b.log.With("process", "proxy"), stopGrace)
	if err != nil {
		return nil, fmt.Errorf("starting the proxy: %w", err)
	}
	defer func() {
		if err != nil {
			proxy.Stop()
		}
	}()
	if err := waitAccepting(sctx, programAddr, program, "the program"); err != nil {
		return nil, err
	}
	if err := waitAccepting(sctx, proxyAddr, proxy, "the proxy"); err != nil {
		return nil, err
	}
	wc, err := b.dialWire(sctx, "ws://"+proxyAddr+"/")
	if err != nil {
		return nil, err
	}
	b.log.Info("backend processes started", "program_pid", program.Pid(), "proxy_pid", proxy.Pid(),
		"program", "http://"+programAddr+"/mcp", "proxy", "ws://"+proxyAddr+"/")
	pc := &processConn{Conn: wc, program: program, proxy: proxy, watchDone: make(chan struct{})}
	go pc.watch()
	return pc, nil
}

// watch ends the connection when either process exits.
func (pc *processConn) watch() {
	defer close(pc.watchDone)
	select {
	case <-pc.program.Done():
		pc.End(fmt.Errorf("the program exited: %w", exitErr(pc.program)))
	case <-pc.proxy.Done():
		pc.End(fmt.Errorf("the proxy exited: %w", exitErr(pc.proxy)))
	case <-pc.Closed():
	}
}

// Close ends the connection, then both process groups.
func (pc *processConn) Close() error {
	err := pc.Conn.Close()
	<-pc.watchDone
	pc.proxy.Stop()
	pc.program.Stop()
	return err
}

// freePort asks the system for a free loopback port. Another process may
// take it before ours listens on it; the start then fails and is retried
// by the restart loop.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port, nil
}

// waitAccepting polls addr until it accepts a connection, the process
// exits, or ctx ends.
func waitAccepting(ctx context.Context, addr string, p *stdio.Program, what string) error {
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s never accepted on %s: %w", what, addr, ctx.Err())
		case <-p.Done():
			t.Stop()
			return fmt.Errorf("%s exited before accepting on %s: %w", what, addr, exitErr(p))
		case <-t.C:
		}
	}
}

// stopGrace is how long a program has to end after SIGTERM.
const stopGrace = 3 * time.Second

// errNoExitStatus is a process that ended without an error of its own.
var errNoExitStatus = errors.New("exit status 0")

// exitErr is why p ended; call it after p is done.
func exitErr(p *stdio.Program) error {
	if err := p.Err(); err != nil {
		return err
	}
	return errNoExitStatus
}
