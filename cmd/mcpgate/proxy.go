// proxy.go is `mcpgate proxy`: the wire in front of one tool container's
// MCP server. It listens on all interfaces by default — it lives inside a
// container, whose network is the boundary — which is the one exception to
// loopback-by-default that the wire specification names.

package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/loopback"
	"github.com/mcpgate/mcpgate/internal/observe/telemetry"
	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/wire"
)

// proxyFlags are mcpgate proxy's flags.
type proxyFlags struct {
	listen, upstreamURL, command, transport, info, era string
	postgresListen, daemonListen                       string
	tlsCert, tlsKey, clientCA, tokenFile               string
	otlpEndpoint                                       string
	keepAlive, keepAliveTimeout                        time.Duration
	verbose                                            bool
}

func proxyCommand() *cobra.Command {
	var pf proxyFlags
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Relay a tool container's MCP server over the container wire",
		Long: "Serve the container wire (the per-path form at /tool/* and the framed connection at /)\n" +
			"in front of one MCP server: by default the container contract's program at\n" +
			"http://127.0.0.1:$PORT (PORT from the environment, default 8080); --upstream for any\n" +
			"Streamable HTTP or legacy SSE URL; --upstream-command for a stdio server to start.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runProxy(cmd, pf) },
	}
	f := cmd.Flags()
	f.StringVar(&pf.listen, "listen", ":14979", "address to serve the wire on (all interfaces by default: the container is the boundary)")
	f.StringVar(&pf.upstreamURL, "upstream", "", "MCP server URL (Streamable HTTP, or legacy SSE when the path ends in /sse)")
	f.StringVar(&pf.transport, "upstream-transport", "", "force the URL's transport: http or sse")
	f.StringVar(&pf.command, "upstream-command", "", "stdio MCP server to start and supervise, e.g. 'node server.js stdio'")
	f.StringVar(&pf.era, "upstream-era", "auto", "what to speak to the upstream: auto (server/discover, then initialize), session (2024-11-05 … 2025-11-25) or sessionless (2026-07-28)")
	f.DurationVar(&pf.keepAlive, "keepalive", wire.DefaultKeepAlive, "ping the gateway after this long without a frame (0: never)")
	f.DurationVar(&pf.keepAliveTimeout, "keepalive-timeout", wire.DefaultKeepAliveTimeout, "end the framed connection when a ping's pong takes longer")
	f.StringVar(&pf.postgresListen, "postgres-listen", "127.0.0.1:5432", "where the program's database driver connects, paired through the gateway with its database (\"\": off)")
	f.StringVar(&pf.daemonListen, "daemon-listen", "127.0.0.1:14980", "where the program dials the Daemon pair, ws://ADDR/daemon, relayed through the gateway (loopback only; \"\": off)")
	f.StringVar(&pf.info, "info", proxy.DefaultInfoPath, "the image's DIVERGE.md")
	f.StringVar(&pf.tlsCert, "tls-cert", "", "serve wss:// with this PEM certificate (and --tls-key)")
	f.StringVar(&pf.tlsKey, "tls-key", "", "the PEM key of --tls-cert")
	f.StringVar(&pf.clientCA, "client-ca", "", "with --tls-cert: admit only clients whose certificate this PEM CA signed (mutual TLS)")
	f.StringVar(&pf.tokenFile, "token-file", "", "a file holding the bearer token every request must carry (or the "+proxyTokenEnv+" environment variable)")
	f.StringVar(&pf.otlpEndpoint, "otlp-endpoint", "", "export a trace span of each relayed exchange to this OTLP/HTTP collector, joined to the gateway's (default: the standard OTEL_EXPORTER_OTLP_* environment; none: off)")
	f.BoolVar(&pf.verbose, "verbose", false, "log at debug level")
	addPprofFlag(cmd) // hidden: --pprof ADDR, loopback only
	keepHeapRoom(cmd)
	return cmd
}

// runProxy serves the wire until the command's context ends.
func runProxy(cmd *cobra.Command, pf proxyFlags) error {
	level := slog.LevelInfo
	if pf.verbose {
		level = slog.LevelDebug
	}
	log := newLogger(cmd, level)
	cfg, err := upstreamConfig(pf.upstreamURL, pf.command, pf.transport)
	if err != nil {
		return err
	}
	if cfg.Era, err = upstreamEra(pf.era, cfg.Kind); err != nil {
		return err
	}
	cfg.Logger = log
	cfg.ClientInfo = mcp.Implementation{Name: "mcpgate-proxy", Version: version}
	pgln, dmln, err := pf.pairListeners(log, &cfg)
	if err != nil {
		return err
	}
	for _, l := range []net.Listener{pgln, dmln} {
		if l != nil {
			defer l.Close()
		}
	}
	up, err := proxy.NewUpstream(cfg)
	if err != nil {
		return err
	}
	defer up.Close()
	keepAlive := pf.keepAlive
	if keepAlive == 0 {
		keepAlive = -1 // --keepalive 0: no pings
	}
	token, err := proxyToken(pf.tokenFile)
	if err != nil {
		return err
	}
	var tlsCfg *tls.Config
	if pf.tlsCert != "" || pf.tlsKey != "" || pf.clientCA != "" {
		if tlsCfg, err = proxy.TLSConfig(pf.tlsCert, pf.tlsKey, pf.clientCA); err != nil {
			return err
		}
	}
	tracer, err := proxyTracer(cmd.Context(), pf.otlpEndpoint, log)
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), 5*time.Second)
		defer cancel()
		if err := tracer.Shutdown(ctx); err != nil {
			log.Warn("mcpgate proxy: the last spans were not exported", "err", err)
		}
	}()
	opts := proxy.Options{Upstream: up, InfoPath: pf.info, Logger: log,
		KeepAlive: keepAlive, KeepAliveTimeout: pf.keepAliveTimeout, Token: token}
	if tracer.Enabled() {
		opts.Observe = tracer.Exchange
	}
	srv := proxy.NewServer(opts)
	ln, err := net.Listen("tcp", pf.listen)
	if err != nil {
		return err
	}
	scheme := "ws"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(ln, tlsCfg), "wss"
	}
	fmt.Fprintf(os.Stderr, "mcpgate proxy: serving the wire at %s://%s/ (upstream: %s)\n", scheme, ln.Addr(), describeUpstream(cfg))
	if wireIsOpen(ln.Addr().String(), tlsCfg != nil, token != nil) {
		go warnOpenWire(cmd.Context(), log, ln.Addr().String())
	}
	servePairs(srv, pgln, dmln, log)
	return serveUntilDone(cmd.Context(), ln, srv, log, nil)
}

// proxyTracer is the proxy's tracing: on with an endpoint, or one in the
// standard environment; its service is mcpgate-proxy unless
// OTEL_SERVICE_NAME says otherwise.
func proxyTracer(ctx context.Context, endpoint string, log *slog.Logger) (*telemetry.Tracer, error) {
	o := telemetry.Options{Endpoint: endpoint, ServiceVersion: version, Logger: log}
	if os.Getenv("OTEL_SERVICE_NAME") == "" {
		o.ServiceName = "mcpgate-proxy"
	}
	t, err := telemetry.New(ctx, o)
	if err == nil && t.Enabled() {
		log.Info("mcpgate proxy: tracing on")
	}
	return t, err
}

// pairListeners opens the Postgres and Daemon pairs' ports (nil for one
// that is off or cannot listen) and tells a program the proxy starts
// where they are.
func (pf proxyFlags) pairListeners(log *slog.Logger, cfg *proxy.UpstreamConfig) (pgln, dmln net.Listener, err error) {
	if pf.daemonListen != "" && !loopback.Addr(pf.daemonListen) {
		return nil, nil, fmt.Errorf("--daemon-listen %s: the Daemon pair listens on loopback only (127.0.0.1 or ::1)", pf.daemonListen)
	}
	if pf.postgresListen != "" {
		if pgln, err = net.Listen("tcp", pf.postgresListen); err != nil {
			log.Warn("mcpgate proxy: the Postgres pair cannot listen; it is off", "addr", pf.postgresListen, "err", err)
			pgln = nil
		} else if cfg.Kind == upstream.KindStdio {
			cfg.Env = append(os.Environ(), "MCPGATE_POSTGRES_ADDR="+pgln.Addr().String())
		}
	}
	if pf.daemonListen != "" {
		if dmln, err = net.Listen("tcp", pf.daemonListen); err != nil {
			log.Warn("mcpgate proxy: the Daemon pair cannot listen; it is off", "addr", pf.daemonListen, "err", err)
			dmln = nil
		} else if cfg.Kind == upstream.KindStdio {
			if cfg.Env == nil {
				cfg.Env = os.Environ()
			}
			cfg.Env = append(cfg.Env, "MCPGATE_DAEMON_URL=ws://"+dmln.Addr().String()+proxy.DaemonPath)
		}
	}
	return pgln, dmln, nil
}

// servePairs serves the pairs whose ports are open, each on its own.
func servePairs(srv *proxy.Server, pgln, dmln net.Listener, log *slog.Logger) {
	if dmln != nil {
		fmt.Fprintf(os.Stderr, "mcpgate proxy: the Daemon pair listens at ws://%s%s (MCPGATE_DAEMON_URL)\n", dmln.Addr(), proxy.DaemonPath)
		go func() {
			if err := srv.ServeDaemons(dmln); err != nil {
				log.Warn("mcpgate proxy: the Daemon pair stopped", "err", err)
			}
		}()
	}
	if pgln != nil {
		fmt.Fprintf(os.Stderr, "mcpgate proxy: the Postgres pair listens at %s (MCPGATE_POSTGRES_ADDR)\n", pgln.Addr())
		go func() {
			if err := srv.ServePostgres(pgln); err != nil {
				log.Warn("mcpgate proxy: the Postgres pair stopped", "err", err)
			}
		}()
	}
}

// upstreamConfig chooses the upstream from the flags: a URL, a command, or
// the container contract.
func upstreamConfig(url, command, transport string) (proxy.UpstreamConfig, error) {
	switch {
	case url != "" && command != "":
		return proxy.UpstreamConfig{}, fmt.Errorf("--upstream and --upstream-command exclude each other")
	case command != "":
		argv := strings.Fields(command)
		if len(argv) == 0 {
			return proxy.UpstreamConfig{}, fmt.Errorf("--upstream-command is empty")
		}
		return proxy.UpstreamConfig{Kind: upstream.KindStdio, Command: argv}, nil
	case url != "":
		kind := upstream.KindHTTP
		switch {
		case transport == "sse" || (transport == "" && strings.HasSuffix(strings.TrimRight(url, "/"), "/sse")):
			kind = upstream.KindSSE
		case transport != "" && transport != "http":
			return proxy.UpstreamConfig{}, fmt.Errorf("--upstream-transport: %q is not http or sse", transport)
		}
		return proxy.UpstreamConfig{Kind: kind, URL: url}, nil
	default:
		return proxy.UpstreamConfig{Kind: upstream.KindContract}, nil
	}
}

// proxyTokenEnv holds the wire's bearer token when --token-file is not given.
const proxyTokenEnv = "MCPGATE_PROXY_TOKEN"

// proxyToken is the wire's bearer token: the file's content (a trailing
// newline cut), else the environment variable's, else none.
func proxyToken(file string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		if b = []byte(strings.TrimRight(string(b), "\r\n")); len(b) == 0 {
			return nil, fmt.Errorf("--token-file %s is empty", file)
		}
		return b, nil
	}
	if v := os.Getenv(proxyTokenEnv); v != "" {
		return []byte(v), nil
	}
	return nil, nil
}

// openWireWarning is said, at start and every hour, by a proxy that
// anyone who reaches its port may use.
const openWireWarning = "mcpgate proxy: the wire listens beyond loopback without TLS or a token: anyone who reaches this port can list and call every tool of this container and read the secrets fed to it; close it with --tls-cert/--tls-key and --client-ca, or --token-file (or " + proxyTokenEnv + "), or a network policy that admits only the gateway"

// wireIsOpen reports whether a proxy listening on addr is anyone's who
// reaches the port: beyond loopback, with neither TLS nor a token.
func wireIsOpen(addr string, tls, token bool) bool { return !loopback.Addr(addr) && !tls && !token }

// warnOpenWire says openWireWarning now and every hour until ctx ends.
func warnOpenWire(ctx context.Context, log *slog.Logger, addr string) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		log.Warn(openWireWarning, "addr", addr)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// upstreamEra is the --upstream-era flag's era for an upstream of kind.
func upstreamEra(era string, kind upstream.Kind) (mcp.Era, error) {
	switch era {
	case "", "auto":
		return mcp.EraAuto, nil
	case "session":
		return mcp.EraSession, nil
	case "sessionless":
		if kind == upstream.KindSSE {
			return "", fmt.Errorf("--upstream-era sessionless: a legacy SSE upstream is of the session era")
		}
		return mcp.EraSessionless, nil
	default:
		return "", fmt.Errorf("--upstream-era: %q is not auto, session or sessionless", era)
	}
}

func describeUpstream(c proxy.UpstreamConfig) string {
	switch c.Kind {
	case upstream.KindStdio:
		return "stdio " + c.Command[0]
	case upstream.KindContract:
		return "container contract on " + proxy.ContractURL(os.Getenv("PORT"))
	default:
		return string(c.Kind) + " " + c.URL
	}
}
