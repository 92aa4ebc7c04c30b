// targets.go starts the processes under test and names each path through
// them: the fixture alone, the null relay, mcpgate serve (http and stdio
// backends), mcpgate proxy (both forms of the wire), the go-sdk relay and
// supergateway. Every one is a separate process on a free loopback port.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// target is one path under test.
type target struct {
	name     string
	note     string
	open     func(context.Context) (caller, error)
	counters *scraper // the relay process's allocation counters; nil: none
	proc     *proc    // the relay process (or the fixture, for direct)
	// url and token reach a gateway's MCP endpoint (startGateway's).
	url, token string
	// pprof is the gateway's profiling address (-profile), profiled once.
	pprof    string
	profiled bool
}

// env is what every target needs: the binaries and a place for files.
type env struct {
	mcpgate string // the mcpgate binary
	self    string // this program, for its relay roles
	dir     string // temporary folder: configurations, stores, logs
	node22  string // empty: supergateway is not installed
	superGW string
	backend string // the fixture's Streamable HTTP URL
	ps      *procs
	hc      *http.Client
	profile string // options.profile
}

const readyTimeout = 30 * time.Second

// start runs a server process and waits until one tools/call answers.
func (e *env) start(ctx context.Context, t *target, name string, environ []string, argv ...string) error {
	p, err := e.ps.start(name, environ, argv...)
	if err != nil {
		return err
	}
	t.proc = p
	// A process that exits ends the wait: it will not answer.
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-waitCtx.Done():
		}
	}()
	c, err := firstAnswer(waitCtx, t.open, readyTimeout, 20*time.Millisecond)
	if err != nil {
		log := filepath.Join(e.ps.logs, name+".log")
		select {
		case <-p.done:
			return &exitedError{name: name, err: p.err, logPath: log, log: logTail(log, 20)}
		default:
		}
		return fmt.Errorf("%s: %w; the end of its log (%s):\n%s", name, err, log, logTail(log, 20))
	}
	c.close(ctx)
	return nil
}

// exitedError is a server process that exited before it answered.
type exitedError struct {
	name    string
	err     error  // how it exited
	logPath string // its log
	log     string // the end of its log
}

func (x *exitedError) Error() string {
	return fmt.Sprintf("%s: exited (%v) before it answered; the end of its log (%s):\n%s", x.name, x.err, x.logPath, x.log)
}

// portTaken says the server could not bind one of its addresses.
func (x *exitedError) portTaken() bool { return strings.Contains(x.log, "address already in use") }

// logTail is the last n lines of the file at path, or why it has none.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startFixture serves the fixture over Streamable HTTP: the backend of
// the direct path and of every relay with an HTTP backend.
func (e *env) startFixture(ctx context.Context) (*target, string, error) {
	var url string
	t, err := e.startOnFreshAddr(ctx, "fixture", nil, func(addr string) (*target, []string) {
		url = "http://" + addr + "/mcp"
		t := &target{name: "direct", note: "mcpgate fixture over Streamable HTTP, no relay", open: sessionFactory(e.hc, url, "")}
		return t, []string{e.mcpgate, "fixture", "--listen", addr}
	})
	return t, url, err
}

// startNullRelay is the ceiling in front of the fixture.
func (e *env) startNullRelay(ctx context.Context, backend string) (*target, error) {
	return e.startOnFreshAddr(ctx, "null-relay", []string{childRole + "=null-relay"}, func(addr string) (*target, []string) {
		t := &target{name: "null-relay", note: "byte-copying HTTP forwarder, no MCP parsing (ceiling)",
			open: sessionFactory(e.hc, "http://"+addr+"/mcp", ""), counters: &scraper{url: "http://" + addr + "/metrics"},
			url: "http://" + addr + "/mcp"}
		return t, []string{e.self, "-listen", addr, "-upstream", backend}
	})
}

// startOnFreshAddr starts, as proc, the server that build makes for a
// free loopback address, and again on another when that one was taken
// before the server bound it.
func (e *env) startOnFreshAddr(ctx context.Context, proc string, environ []string, build func(addr string) (*target, []string)) (*target, error) {
	return onFreshAddrs(func() (*target, error) {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		t, argv := build(addr)
		return t, e.start(ctx, t, proc, environ, argv...)
	})
}

// gatewayConfig writes a serve configuration: one backend, no prefix,
// authentication on, metrics on a separate loopback port, and the
// session cap given.
func (e *env) gatewayConfig(name, backendYAML string, maxSessions int) (cfgPath, listen, metrics string, err error) {
	a, err := freeAddrs(2)
	if err != nil {
		return
	}
	listen, metrics = a[0], a[1]
	dir := filepath.Join(e.dir, name)
	if err = os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	cfg := fmt.Sprintf("listen: %q\nstore: %q\nmetrics:\n  listen: %q\nhttp:\n  sessionless: true\n  max_sessions: %d\n  max_sessions_per_identity: %d\nbackends:\n%s",
		listen, filepath.Join(dir, "mcpgate.db"), metrics, maxSessions, maxSessions, backendYAML)
	cfgPath = filepath.Join(dir, "mcpgate.yaml")
	err = os.WriteFile(cfgPath, []byte(cfg), 0o600)
	return
}

func httpBackendYAML(url string) string {
	return fmt.Sprintf("  - name: fixture\n    kind: http\n    url: %q\n    prefix: \"-\"\n", url)
}

// rulesYAML is n policy rules that every call of the bench's token (an
// admin's) to the fixture matches, and passes: each reads the principal,
// the request and its arguments.
func rulesYAML(n int) string {
	out := "policy:\n  rules:\n"
	for i := range n {
		out += fmt.Sprintf("    - {name: r%d, match: 'request.backend == \"fixture\" && principal.role == \"admin\"', deny_unless: 'request.arguments.size() < 100 && request.entry != \"r%d\"'}\n", i, i)
	}
	return out
}

// startAllowHook serves, on loopback in this process, a webhook that
// reads each document and allows the call; it returns its URL.
func startAllowHook() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"decision":"allow"}`)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/hook", func() { _ = srv.Close() }, nil
}

func (e *env) stdioBackendYAML() string {
	return fmt.Sprintf("  - name: fixture\n    kind: stdio\n    command: [%q, \"fixture\", \"--stdio\"]\n    prefix: \"-\"\n", e.mcpgate)
}

// token creates an admin service token in the configuration's store.
func (e *env) token(ctx context.Context, cfgPath string) (string, error) {
	out, err := exec.CommandContext(ctx, e.mcpgate, "token", "create", "--config", cfgPath, "--name", "bench", "--role", "admin").Output()
	if err != nil {
		return "", fmt.Errorf("mcpgate token create: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// startGateway starts mcpgate serve with backendYAML and a token.
func (e *env) startGateway(ctx context.Context, name, note, backendYAML string, maxSessions int) (*target, error) {
	return e.startGatewayIn(ctx, nil, name, note, backendYAML, maxSessions)
}

// startGatewayIn is startGateway with environ added to the process's
// environment.
func (e *env) startGatewayIn(ctx context.Context, environ []string, name, note, backendYAML string, maxSessions int) (*target, error) {
	return onFreshAddrs(func() (*target, error) { return e.startGatewayOnce(ctx, environ, name, note, backendYAML, maxSessions) })
}

// busyPortTries is how many times a server is started on fresh addresses
// when another process took one of its ports between their choice and
// its bind: a run makes many connections, each on a port of the same
// range.
const busyPortTries = 3

// onFreshAddrs calls start, which picks its server's addresses itself,
// again when the server exited because a port was taken.
func onFreshAddrs[T any](start func() (T, error)) (T, error) {
	for try := 1; ; try++ {
		t, err := start()
		var exited *exitedError
		if err == nil || try == busyPortTries || !errors.As(err, &exited) || !exited.portTaken() {
			return t, err
		}
	}
}

func (e *env) startGatewayOnce(ctx context.Context, environ []string, name, note, backendYAML string, maxSessions int) (*target, error) {
	cfg, listen, metrics, err := e.gatewayConfig(name, backendYAML, maxSessions)
	if err != nil {
		return nil, err
	}
	tok, err := e.token(ctx, cfg)
	if err != nil {
		return nil, err
	}
	t := &target{name: name, note: note, open: sessionFactory(e.hc, "http://"+listen+"/mcp", tok),
		counters: &scraper{url: "http://" + metrics + "/metrics"}, url: "http://" + listen + "/mcp", token: tok}
	argv := []string{e.mcpgate, "serve", "--config", cfg}
	if e.profile != "" {
		if t.pprof, err = freeAddr(); err != nil {
			return nil, err
		}
		argv = append(argv, "--pprof", t.pprof)
	}
	return t, e.start(ctx, t, name, environ, argv...)
}

// sessionless is the same gateway process as t, called as a 2026-07-28
// client calls: each tools/call on its own, no session.
func (e *env) sessionless(t *target, name, note string) *target {
	url, tok := t.url, t.token
	return &target{name: name, note: note, counters: t.counters, proc: t.proc, pprof: t.pprof, // profiled in its own window
		open: func(context.Context) (caller, error) { return sessionlessCaller{hc: e.hc, url: url, token: tok}, nil }}
}

// largeAnswers is the same process as t, each call answered with 64 KiB
// of text (largeParams).
func (e *env) largeAnswers(t *target, name, note string) *target {
	return &target{name: name, note: note, counters: t.counters, proc: t.proc, url: t.url, token: t.token, pprof: t.pprof, // profiled in its own window
		open: sessionsCalling(e.hc, t.url, t.token, largeParams)}
}

// startProxy starts mcpgate proxy in front of the fixture — upstream is
// "--upstream URL" or "--upstream-command CMD" — and returns its two
// forms as targets, their names ending in suffix.
func (e *env) startProxy(ctx context.Context, suffix, what string, upstream ...string) (perPath, framedT, prompts *target, f *framed, err error) {
	var base string
	perPath, err = e.startOnFreshAddr(ctx, "proxy"+suffix, nil, func(addr string) (*target, []string) {
		base = "ws://" + addr
		perPath := &target{name: "wire-per-path" + suffix, note: "mcpgate proxy (" + what + "), one WebSocket per call (/tool/call-tool)",
			open: func(context.Context) (caller, error) { return perPathCaller{base: base}, nil }}
		return perPath, append([]string{e.mcpgate, "proxy", "--listen", addr, "--info", filepath.Join(e.dir, "no-DIVERGE.md"),
			"--postgres-listen=", "--daemon-listen="}, upstream...)
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if f, err = dialFramed(ctx, base); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("the framed connection: %w", err)
	}
	framedT = &target{name: "wire-framed" + suffix, note: "mcpgate proxy (" + what + "), channels on one framed connection",
		open: func(context.Context) (caller, error) { return framedCaller{f: f}, nil }, proc: perPath.proc}
	prompts = &target{name: "wire-framed-prompts" + suffix, note: "the same framed connection, prompts/get (tag 9) instead of tools/call",
		open: func(context.Context) (caller, error) { return framedCaller{f: f, req: promptRequest}, nil }, proc: perPath.proc}
	return perPath, framedT, prompts, f, nil
}

// startSDKRelay starts the go-sdk relay in front of a backend: a stdio
// command (upstreamFlag "-upstream-command") or a URL ("-upstream").
func (e *env) startSDKRelay(ctx context.Context, name, note, upstreamFlag, upstream string) (*target, error) {
	return e.startOnFreshAddr(ctx, name, []string{childRole + "=sdk-relay"}, func(addr string) (*target, []string) {
		t := &target{name: name, note: note, open: sessionFactory(e.hc, "http://"+addr+"/mcp", ""),
			counters: &scraper{url: "http://" + addr + "/metrics"}}
		return t, []string{e.self, "-listen", addr, upstreamFlag, upstream}
	})
}

// startSupergateway starts supergateway --stateful in front of the stdio
// fixture. It starts one fixture process per session.
func (e *env) startSupergateway(ctx context.Context) (*target, error) {
	return e.startOnFreshAddr(ctx, "supergateway", nil, func(addr string) (*target, []string) {
		_, port, _ := strings.Cut(addr, ":")
		t := &target{name: "supergateway-stdio", note: "supergateway 4.0.0 --stateful, stdio fixture (one child per session)",
			open: sessionFactory(e.hc, "http://"+addr+"/mcp", "")}
		return t, []string{e.node22, e.superGW, "--stdio", e.mcpgate + " fixture --stdio",
			"--outputTransport", "streamableHttp", "--stateful", "--port", port, "--logLevel", "none"}
	})
}
