// serve.go is `mcpgate serve`: the authenticated MCP endpoint, on an
// embedded default that needs nothing else — a SQLite store, a loopback
// address, and on first run a printed admin token with the command to
// connect a client.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

type serveFlags struct {
	config    string
	listen    string
	store     string
	redis     string
	noAuth    bool
	stdio     bool
	stateless bool
	verbose   bool
	backends  []string // NAME=KIND:TARGET
	noPrefix  bool
	// configPoll is how often the --config file is checked for a change
	// (0: only on SIGHUP).
	configPoll time.Duration
}

func serveCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the authenticated MCP endpoint",
		Long: "Serve one MCP endpoint (Streamable HTTP at /mcp, legacy SSE at /sse, or stdio) with\n" +
			"authentication, roles, rate limits and an audit log, relaying the configured backends\n" +
			"(backends: in the file, or --backend). With no backend it relays a demonstration\n" +
			"backend, \"demo\": the conformance fixture run as a process backend behind mcpgate proxy.",
		Example: "  mcpgate serve --no-auth --backend fs=stdio:'npx -y @modelcontextprotocol/server-filesystem /tmp'\n" +
			"  mcpgate serve --backend remote=http:https://mcp.example/mcp --no-prefix",
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "configuration file (YAML)")
	fl.StringVar(&f.listen, "listen", "", "HTTP address (default 127.0.0.1:8080)")
	fl.StringVar(&f.store, "store", "", "SQLite database (default "+config.DefaultStorePath()+"), or postgres://USER@HOST/DB (password: PGPASSWORD or store_password_file)")
	fl.StringVar(&f.redis, "redis", "", "Redis shared by replicas: redis://HOST:PORT/DB (password: MCPGATE_REDIS_PASSWORD or redis.password_file)")
	fl.BoolVar(&f.noAuth, "no-auth", false, "turn authentication off (local development; loopback only)")
	fl.BoolVar(&f.stdio, "stdio", false, "serve one session on stdin/stdout as the configured local identity")
	fl.BoolVar(&f.stateless, "stateless", false, "serve Streamable HTTP without sessions")
	fl.BoolVar(&f.verbose, "verbose", false, "log at debug level")
	fl.StringArrayVar(&f.backends, "backend", nil, "relay a backend: NAME=stdio:'CMD ARGS', NAME=http:URL, NAME=sse:URL, NAME=proxy:ws://HOST:PORT or NAME=process:'CMD ARGS' (repeatable)")
	fl.BoolVar(&f.noPrefix, "no-prefix", false, "keep the --backend backends' own tool and prompt names (no NAME__ prefix)")
	fl.DurationVar(&f.configPoll, "config-poll", time.Second, "how often the --config file is checked for changes to reload (0: only on SIGHUP)")
	addPprofFlag(cmd) // hidden: --pprof ADDR, loopback only
	keepHeapRoom(cmd)
	return cmd
}

// loadConfig reads the file and applies the flags over it.
func loadConfig(f serveFlags) (*config.Config, error) {
	cfg, err := config.Load(f.config)
	if err != nil {
		return nil, err
	}
	if f.listen != "" {
		cfg.Listen = f.listen
	}
	if f.store != "" {
		cfg.Store = f.store
	}
	if f.redis != "" {
		cfg.Redis.URL = f.redis
	}
	cfg.Auth.Disabled = cfg.Auth.Disabled || f.noAuth
	cfg.HTTP.Stateless = cfg.HTTP.Stateless || f.stateless
	if err := mergeBackendFlags(cfg, f); err != nil {
		return nil, err
	}
	return cfg, cfg.Validate()
}

// mergeBackendFlags adds the --backend backends to the file's; one of the
// same name replaces the file's.
func mergeBackendFlags(cfg *config.Config, f serveFlags) error {
	for _, s := range f.backends {
		b, err := config.ParseBackendFlag(s)
		if err != nil {
			return err
		}
		if f.noPrefix {
			b.Prefix = config.NoPrefix
		}
		i := slices.IndexFunc(cfg.Backends, func(c config.BackendConfig) bool { return c.Name == b.Name })
		if i >= 0 {
			cfg.Backends[i] = b
		} else {
			cfg.Backends = append(cfg.Backends, b)
		}
	}
	if f.noPrefix && len(f.backends) == 0 {
		return errors.New("--no-prefix applies to --backend backends; give at least one (or prefix: \"-\" in the file)")
	}
	return nil
}

func runServe(cmd *cobra.Command, f serveFlags) error {
	cfg, err := loadConfig(f)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	log := newLogger(cmd, level)
	ctx := cmd.Context()
	st, err := openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer st.Close()
	shared, err := openCluster(ctx, cfg, log)
	if err != nil {
		return err
	}
	if shared != nil {
		defer shared.Close()
	}
	opts := gateway.Options{Store: st, Logger: log, Info: mcp.Implementation{Name: "mcpgate", Version: version}, Cluster: shared}
	demo, err := addDemo(cfg)
	if err != nil {
		return err
	}
	gw, err := gateway.New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := gw.Close(shutdown); err != nil {
			log.Error("shutdown", "err", err)
		}
	}()
	// Listening before the backends start: the address is in the links
	// an admin follows to authorize the gateway at a backend's server.
	var ln net.Listener
	if !f.stdio {
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return err
		}
		gw.Listening(pasteHost(ln.Addr()))
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go gw.Run(runCtx)
	defer followConfig(runCtx, f, gw, log)() // SIGHUP and edits of --config reload

	if f.stdio {
		return gw.ServeStdio(ctx, os.Stdin, os.Stdout)
	}
	if h := gw.MetricsHandler(); h != nil {
		mln, err := net.Listen("tcp", cfg.Metrics.Listen)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("metrics.listen: %w", err)
		}
		log.Info("serving metrics", "url", "http://"+mln.Addr().String()+"/metrics")
		go func() {
			if err := serveUntilDone(ctx, mln, h, log, nil); err != nil {
				log.Error("metrics endpoint", "err", err)
			}
		}()
	}
	host := pasteHost(ln.Addr())
	url := "http://" + host + "/mcp"
	if demo {
		waitDemo(ctx, gw, log)
	}
	if err := firstRun(ctx, cmd.OutOrStdout(), gw, cfg, url); err != nil {
		return err
	}
	log.Info("serving", "mcp", url, "sse", "http://"+host+"/sse", "listen", ln.Addr().String(), "auth", !cfg.Auth.Disabled, "store", config.StoreDisplay(cfg.Store))
	return serveUntilDone(ctx, ln, gw.Handler(), log, func() { _ = gw.EndSessions() })
}

// firstRun prints how to connect; when no service token exists yet it
// creates an admin token and prints it, once.
func firstRun(ctx context.Context, out io.Writer, gw *gateway.Gateway, cfg *config.Config, url string) error {
	fmt.Fprintf(out, "mcpgate: serving MCP at %s\n", url)
	if cfg.Auth.Disabled {
		fmt.Fprintf(out, "mcpgate: authentication is OFF (local development)\nconnect:  claude mcp add --transport http mcpgate %s\n", url)
		printInspector(out, url, "")
		return nil
	}
	tokens := gw.Tokens()
	if n := len(tokens.List()); n > 0 {
		// The first run's token was shown once; say how to get in now.
		fmt.Fprintf(out, "mcpgate: %d service token(s) in %s; `mcpgate token list%s` shows them, never their secrets\n",
			n, config.StoreDisplay(cfg.Store), storeFlagFor(cfg))
		fmt.Fprintf(out, "new admin token:  mcpgate token create --name admin --role admin%s\n", storeFlagFor(cfg))
		fmt.Fprintf(out, "connect:  claude mcp add --transport http mcpgate %s --header \"Authorization: Bearer $MCPGATE_TOKEN\"\n", url)
		printInspector(out, url, "$MCPGATE_TOKEN")
		printConsole(out, url)
		return nil
	}
	secret, rec, err := tokens.Create(ctx, "first-run admin", "admin", time.Time{})
	if err != nil {
		return fmt.Errorf("creating the first admin token: %w", err)
	}
	fmt.Fprintf(out, "mcpgate: created an admin service token (%s); it is shown this once:\n\n    %s\n\n", rec.ID, secret)
	fmt.Fprintf(out, "connect:  claude mcp add --transport http mcpgate %s --header \"Authorization: Bearer %s\"\n", url, secret)
	printInspector(out, url, secret)
	printConsole(out, url)
	fmt.Fprintf(out, "try:      curl -s %s -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\\n", url, secret)
	fmt.Fprintf(out, "            -H 'Accept: application/json, text/event-stream' \\\n")
	fmt.Fprintf(out, "            -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}'\n")
	return nil
}

// printConsole prints where the admin console is.
func printConsole(out io.Writer, url string) {
	fmt.Fprintf(out, "console:  %s (log in with an admin token)\n", strings.TrimSuffix(url, "/mcp")+"/admin/")
}

// pasteHost is addr as a client on this machine reaches it: a listener
// on every address (0.0.0.0, [::]) prints as 127.0.0.1, since
// http://[::]:8080 is no URL to paste.
func pasteHost(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// storeFlagFor is the --store flag that names cfg's store to a command
// run by hand ("" for the default store).
func storeFlagFor(cfg *config.Config) string {
	if cfg.Store == config.DefaultStorePath() {
		return ""
	}
	return " --store " + shellQuote(config.StoreDisplay(cfg.Store))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '@' || r == '=' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// serveUntilDone serves HTTP on ln until ctx ends, then shuts down:
// endStreams (when set) ends the long-lived streams that would otherwise
// keep the shutdown waiting, and requests in flight are waited for.
func serveUntilDone(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger, endStreams func()) error {
	srv := mcphttp.NewServer(h)
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	if endStreams != nil {
		srv.RegisterOnShutdown(endStreams)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
