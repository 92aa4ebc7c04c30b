// Package gateway assembles mcpgate's MCP endpoint: the engine behind
// authentication, the call gate with its rate limits, and the audit log,
// served over Streamable HTTP, legacy SSE and stdio. The command builds it
// from configuration; tests build it the same way, so what they check is
// what runs.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/auth/authserver"
	"github.com/mcpgate/mcpgate/internal/auth/personal"
	"github.com/mcpgate/mcpgate/internal/cluster"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway/admin"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/gateway/toolsearch"
	"github.com/mcpgate/mcpgate/internal/intercept"
	"github.com/mcpgate/mcpgate/internal/observe/audit"
	"github.com/mcpgate/mcpgate/internal/observe/metrics"
	"github.com/mcpgate/mcpgate/internal/observe/telemetry"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Options are what the gateway needs besides its configuration.
type Options struct {
	Store  store.Store
	Logger *slog.Logger
	Info   mcp.Implementation
	// Catalogue registers entries of the gateway's own, beside those
	// relayed from the configured backends.
	Catalogue func(*mcp.Server)
	// Backend tunes how backends are kept connected (restart backoff,
	// pings); its Logger is the gateway's.
	Backend backends.Options
	// Complete serves completion/complete for the catalogue (optional).
	Complete mcp.HandlerFunc
	// Now is the clock of the rate limits (default time.Now).
	Now func() time.Time
	// Cluster, when set, is the Redis every replica shares: rate buckets,
	// token events, the sealed sessions' liveness and counts (package
	// cluster). Without it each replica keeps its own.
	Cluster *cluster.Redis
}

// Gateway is one assembled MCP endpoint.
type Gateway struct {
	cfg    *config.Config
	log    *slog.Logger
	server *mcp.Server
	roles  *policy.Roles
	gate   *limitGate // roles and the rate limits in force
	tokens *auth.Tokens
	// listening is the address the gateway serves on, once known
	// (Listening).
	listening atomic.Pointer[string]
	// personal is the people's credentials for per_user backends (nil
	// when vault names no key; personal.go).
	personal *personal.Credentials
	oauth    *auth.OAuthVerifier // nil without auth.oauth
	// backendOAuth is the gateway as an OAuth client of its backends
	// (backend_oauth.go; nil when oauth_client.disabled).
	backendOAuth *backendOAuth
	// console is the admin console (nil with authentication off).
	console *admin.Handler
	// authServer is the built-in authorization server (auth.oauth.builtin).
	authServer *authserver.Server
	audit      *audit.Log
	pins       *pins // nil: pinning off (pins.go)
	metrics    *metrics.Metrics
	// intercepts are the interceptors in force (intercept.go), and
	// hookCounts their outcomes, for the console.
	intercepts atomic.Pointer[intercept.Chain]
	hookCounts outcomeCounts
	hookTools  hookClients
	hookOnce   sync.Once
	hookHTTP   *http.Transport // the webhooks' connections
	tracer     *telemetry.Tracer
	// backends relays the configured backends; always there, empty when
	// none is configured, so that a reload can add the first one.
	backends *backends.Set
	claims   *catalogue.Claims // who owns each relayed entry; the backends' order
	handOff  *cluster.HandOff  // what reached this replica and belongs to another, and back, with Redis
	reload   reloadState

	cluster *cluster.Redis // nil without Redis
	// sharedFailedAt throttles the warning that Redis is unreachable
	// (unix nanoseconds of the last one).
	sharedFailedAt atomic.Int64

	streamable *mcphttp.Handler
	legacy     *mcphttp.SSEHandler
	handler    http.Handler
	// started is closed when requests that read the catalogue stop
	// waiting for the backends (startup.go).
	started       chan struct{}
	startOnce     sync.Once
	startDeadline *time.Timer
	// stdioSessions counts the sessions ServeStdio is serving.
	stdioSessions atomic.Int64
}

// New builds the gateway. Authentication is on unless the configuration
// turns it off, which is refused on a non-loopback address.
func New(ctx context.Context, cfg *config.Config, o Options) (*Gateway, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{cfg: cfg, log: o.Logger}
	if err := g.newGate(o); err != nil {
		return nil, err
	}
	// Everything that can fail comes before the audit log, whose writer
	// goroutine would otherwise outlive a refused New.
	if err := g.checkMetricsListen(); err != nil {
		return nil, err
	}
	authn, authenticator, err := g.authentication(ctx, o.Store)
	if err != nil {
		return nil, err
	}
	if g.backendOAuth, err = g.newBackendOAuth(o.Store); err != nil {
		return nil, err
	}
	specs, err := backendSpecs(cfg.Backends, g.backendOAuth, outbound(cfg.Outbound))
	if err != nil {
		return nil, err
	}
	traceOpts, err := g.tracingOptions(o.Info)
	if err != nil {
		return nil, err
	}
	g.metrics = metrics.New()
	if err := g.startTracing(ctx, traceOpts); err != nil {
		return nil, err
	}
	if err := g.newEngine(ctx, specs, o); err != nil {
		return nil, err
	}
	if err := g.startBackends(specs, o.Backend, o.Store); err != nil {
		return nil, err
	}
	g.reload.init(cfg, specs)
	console, err := g.newAdmin(authenticator, o.Store)
	if err == nil {
		var h http.Handler
		if console != nil {
			h = console
		}
		err = g.mountHTTP(authn, h)
	}
	if err != nil {
		g.backends.Close()
		if g.audit != nil {
			_ = g.audit.Close(ctx)
		}
		return nil, err
	}
	g.watchGauges(o.Store)
	return g, nil
}

// newGate builds the roles, the rate rules and the call gate over them.
func (g *Gateway) newGate(o Options) error {
	var err error
	if g.roles, err = policy.NewRoles(g.cfg.Roles); err != nil {
		return fmt.Errorf("roles: %w", err)
	}
	rules := limitRules(g.cfg.RateLimits)
	if err := rules.Validate(); err != nil {
		return fmt.Errorf("rate_limits: %w", err)
	}
	var shared policy.SharedBuckets
	if o.Cluster != nil {
		shared = o.Cluster.Buckets()
	}
	g.cluster = o.Cluster
	g.gate = newLimitGate(g.roles, rules, o.Now, shared, g.sharedBucketsFailed)
	cel, err := policy.CompileRules(g.cfg.Policy.Specs(), g.log)
	if err != nil {
		return err
	}
	g.gate.setRules(cel)
	return nil
}

// newEngine builds the front MCP server: its claims ledger over the
// backends, its observers, the search view's tools and its middleware.
func (g *Gateway) newEngine(ctx context.Context, specs []backends.Spec, o Options) error {
	cfg := g.cfg
	// With backends, completion/complete is routed by its ref to the
	// backend owning the prompt or template, unless the caller serves it.
	// The completions capability is fixed at start: a gateway started
	// without backends does not offer it after a reload adds one. A call
	// to an entry of a backend that is down answers -32603 with
	// data.backend (to those who may see the entry), not "unknown".
	// A resource URI several backends list is served by the first of them
	// in the configuration (catalogue/uri_claims.go).
	claims := catalogue.NewClaims()
	claims.SetOrder(specNames(specs))
	if g.cluster != nil {
		claims.ShareTasks(g.cluster.Tasks(), g.log) // a task is polled through any replica
		g.handOff = g.cluster.HandOff()             // and a parked call resumed (Run serves it)
		claims.ShareParks(g.handOff)
	}
	g.claims = claims
	unknown := claims.Unknown
	complete := o.Complete
	if len(specs) > 0 && complete == nil {
		complete = claims.Complete
	}
	// The traces, the metrics and the audit log observe the engine: each
	// request's entry, with the backend owning it, and its outcome are
	// the engine's, resolved and classified once (mcp/observer.go). The
	// span is begun first and ended last.
	var observers []mcp.Observer
	if g.tracer.Enabled() {
		observers = append(observers, g.tracer.Observer())
	}
	observers = append(observers, g.metrics.Observer())
	if !cfg.Audit.Disabled {
		opts := audit.Options{Wait: !cfg.Audit.Async, FlushEvery: cfg.Audit.FlushEvery.Duration, Logger: o.Logger}
		if j, ok := o.Store.(audit.Journaled); ok && j.AuditJournal() != "" && opts.Wait && cfg.Audit.JournalOn() {
			var err error
			if g.audit, err = audit.NewJournaledLog(ctx, j, opts); err != nil {
				return err
			}
		} else {
			g.audit = audit.NewLog(o.Store, opts)
		}
		observers = append(observers, audit.Observer(g.audit))
	}
	stateKey, previousStateKey := g.stateKeys()
	replica, foreignAnswer := g.replica()
	g.server = mcp.NewServer(mcp.Options{
		Info:      o.Info,
		Logger:    o.Logger,
		Gate:      g.gate,
		Observers: observers,
		Complete:  complete,
		Unknown:   unknown,
		// The instructions are the backends' (catalogue/instructions.go).
		InstructionsFrom: claims.Instructions,
		Pinned:           g.pinned,
		StateKey:         stateKey,
		PreviousStateKey: previousStateKey,
		Replica:          replica,
		ForeignAnswer:    foreignAnswer,
	})
	if cfg.Catalogue.SearchOn() {
		// The search mode's two tools (catalogue.go), before any backend's.
		if err := g.server.AddTools(toolsearch.Tools(g.server)...); err != nil {
			return err
		}
		claims.ReserveTools(toolsearch.FindName, toolsearch.CallName)
	}
	g.newStartup()
	g.server.Use(g.awaitBackends, g.personArrives, claims.ForwardLogLevel, claims.RelayTasks)
	chain, err := g.newIntercepts(cfg)
	if err != nil {
		return err
	}
	g.intercepts.Store(chain)
	g.server.UseAdmitted(g.intercepted)
	if o.Catalogue != nil {
		o.Catalogue(g.server)
	}
	return nil
}

// startBackends starts the set of backends, one per spec.
func (g *Gateway) startBackends(specs []backends.Spec, bo backends.Options, st store.Store) error {
	bo.Logger = g.log
	bo.Claims = g.claims
	bo.Observe = g.upstreamObserver()
	bo.Pin = g.pinner(st)
	if err := g.personalOptions(&bo, st); err != nil {
		return err
	}
	g.backends = backends.NewSet(g.server, bo)
	for _, s := range specs {
		if err := g.backends.Add(s); err != nil { // validated above: not expected
			g.backends.Close()
			return err
		}
	}
	return nil
}

// authentication returns the middleware that resolves every HTTP request
// to an identity, or refuses it with 401, and the authenticator behind it
// (nil when authentication is off).
func (g *Gateway) authentication(ctx context.Context, st store.Store) (func(http.Handler) http.Handler, *auth.Authenticator, error) {
	if g.cfg.Auth.Disabled {
		if err := auth.CheckLoopback(g.cfg.Listen); err != nil {
			return nil, nil, fmt.Errorf("auth.disabled: authentication may only be off on a loopback address: %w", err)
		}
		g.log.Warn("authentication is off (local development only)", "listen", g.cfg.Listen)
		return auth.NoAuth(g.localIdentity()), nil, nil
	}
	g.tokens = auth.NewTokens(st, g.log)
	g.announceTokens()
	if err := g.tokens.Load(ctx); err != nil {
		return nil, nil, fmt.Errorf("loading service tokens: %w", err)
	}
	jwt, err := jwtVerifier(ctx, g.cfg.Auth.JWT)
	if err != nil {
		return nil, nil, err
	}
	var metadata string
	if g.oauth, metadata, err = g.oauthVerifier(ctx, st); err != nil {
		return nil, nil, err
	}
	a, err := auth.New(auth.Options{Tokens: g.tokens, JWT: jwt, OAuth: g.oauth, ResourceMetadata: metadata, KnownRole: g.roles.Known, Logger: g.log,
		// A GET stream, and a 2026-07-28 subscriptions/listen (a POST
		// that stays open: the transport refuses a Mcp-Method that is not
		// the body's), end with their credential.
		Stream: func(r *http.Request) bool {
			return r.Method == http.MethodGet || r.Header.Get(mcphttp.HeaderMethod) == "subscriptions/listen"
		},
		Active: g.grantActive})
	if err != nil {
		return nil, nil, err
	}
	return a.Wrap, a, nil
}

// grantActive reports whether an OAuth caller may still act: for an
// access token of the built-in server, its grant and the service token
// behind it; any other issuer's token lasts until it expires.
func (g *Gateway) grantActive(ctx context.Context, id mcp.Identity, now time.Time) bool {
	if g.authServer == nil || !strings.HasPrefix(id.TokenID, authserver.GrantPrefix) {
		return true
	}
	return g.authServer.Active(ctx, id, now)
}

// localIdentity is the caller when there is no credential: no-auth mode,
// and stdio.
func (g *Gateway) localIdentity() mcp.Identity {
	return mcp.Identity{Subject: g.cfg.Auth.Identity.Subject, Role: g.cfg.Auth.Identity.Role, TokenID: "local"}
}

func (g *Gateway) mountHTTP(authn func(http.Handler) http.Handler, console http.Handler) error {
	h := g.cfg.HTTP
	sealer, err := g.sealer()
	if err != nil {
		return err
	}
	opts := mcphttp.Options{
		Sealer:                 sealer,
		SealedMaxAge:           g.cfg.Sessions.MaxAge.Duration,
		Stateless:              h.Stateless,
		Sessionless:            h.SessionlessOn(),
		MaxBodyBytes:           h.MaxBodyBytes,
		BodyTimeout:            h.BodyTimeout.Duration,
		IdleTimeout:            h.SessionIdle.Duration,
		MaxSessions:            h.MaxSessions,
		MaxSessionsPerIdentity: h.MaxSessionsPerIdentity,
		Shared:                 g.sharedSessions(),
		SessionRefused:         g.sessionRefused,
		Extras:                 upstreamExtras{g.backends},
		Logger:                 g.log,
		MessagesPath:           "/messages",
	}
	g.streamable = mcphttp.NewHandler(g.server, opts)
	g.legacy = mcphttp.NewSSEHandler(g.server, opts)
	// The MCP endpoints by exact path: a map, not a ServeMux, whose match
	// cost three allocations on every call (the paths are exact, so it had
	// nothing to clean or redirect).
	mcpRoutes := map[string]http.Handler{"/mcp": g.streamable, compactPath: g.streamable, // the same sessions; the compact view (catalogue.go)
		"/sse": g.legacy, "/messages": g.legacy}
	if g.cfg.Catalogue.SearchOn() {
		mcpRoutes[searchPath] = g.streamable
	}
	mcpEntry := authn(g.traceHTTP(g.catalogueView(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := mcpRoutes[r.URL.Path]; h != nil {
			h.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	}))))

	root := http.NewServeMux()
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	root.HandleFunc("GET /readyz", g.serveReadyz)
	g.mountResourceMetadata(root)
	g.mountBackendOAuth(root)
	root.Handle("GET /metrics", authn(g.adminOnly(g.metrics.Handler())))
	if console != nil {
		// The console authenticates on its own: a browser logs in once
		// and holds a cookie (package admin).
		root.Handle("/admin", console)
		root.Handle("/admin/", console)
	}
	root.Handle("/", mcpEntry)
	// Every route that is not MCP's reads its body whole, bounded in
	// size and time, before its handler runs (mcphttp.Bounded); the MCP
	// endpoints bound theirs themselves, by http.max_body_bytes.
	bounded := mcphttp.Bounded(root, mcphttp.DefaultFormBytes, h.BodyTimeout.Duration)
	mcpPaths := map[string]bool{"/mcp": true, compactPath: true, searchPath: true, "/sse": true, "/messages": true}
	routes := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mcpPaths[r.URL.Path] {
			mcpEntry.ServeHTTP(w, r) // what root routes them to
			return
		}
		bounded.ServeHTTP(w, r)
	})
	g.handler = mcphttp.Guard(routes, mcphttp.GuardOptions{AllowedHosts: h.AllowedHosts, AllowedOrigins: h.AllowedOrigins,
		// A browser-based client reads what it needs to connect: the MCP
		// endpoints, the metadata, and the built-in server's token,
		// registration and revocation. The console and the sign-in pages
		// are same-origin only.
		CORSPaths: []string{"/mcp", compactPath, searchPath, "/sse", "/messages", "/.well-known/",
			authserver.TokenPath, authserver.RegisterPath, authserver.RevokePath}})
	return nil
}

// Handler serves every HTTP route: /mcp, /sse, /messages, /healthz,
// /readyz and /metrics (admins only).
func (g *Gateway) Handler() http.Handler { return g.handler }

// Server is the MCP engine behind the routes.
func (g *Gateway) Server() *mcp.Server { return g.server }

// Tokens is the service-token index (nil when authentication is off).
func (g *Gateway) Tokens() *auth.Tokens { return g.tokens }

// Run keeps the gateway's background work going until ctx ends: the
// backends connected, rate buckets swept, and service tokens revoked by
// another process (the CLI) picked up.
func (g *Gateway) Run(ctx context.Context) {
	done := make(chan struct{})
	go func() { g.gate.sweep(ctx, time.Minute); close(done) }()
	go g.watchStartup(ctx)
	var backendsDone chan struct{}
	if g.backends != nil {
		backendsDone = make(chan struct{})
		go func() {
			defer close(backendsDone)
			if err := g.backends.Run(ctx); err != nil {
				g.log.Debug("backends not started", "err", err) // closed before Run
			}
		}()
	}
	if g.tokens != nil && g.cluster != nil {
		watched := make(chan struct{})
		go func() { defer close(watched); g.watchTokens(ctx) }()
		defer func() { <-watched }()
	}
	if g.handOff != nil {
		served := make(chan struct{})
		go func() { defer close(served); g.handOff.Serve(ctx, g.claims.ResumeParked, g.deliverAnswer) }()
		defer func() { <-served }()
	}
	if g.pins != nil {
		rechecked := make(chan struct{})
		go func() { defer close(rechecked); g.pins.recheck(ctx) }()
		defer func() { <-rechecked }()
	}
	sampled := make(chan struct{})
	go func() { defer close(sampled); g.sampleHistory(ctx) }()
	defer func() { <-sampled }()
	if g.tokens != nil {
		g.tokens.RefreshEvery(ctx, 2*time.Second)
	}
	<-done
	if backendsDone != nil {
		<-backendsDone
	}
}

// EndSessions ends every HTTP session and stream, cancelling the requests
// in flight, and stops the backends (their processes ended); an HTTP
// server's shutdown calls it so that open streams do not hold the shutdown
// up. It may be called more than once.
func (g *Gateway) EndSessions() error {
	if g.backends != nil {
		g.backends.Close()
	}
	g.streamable.Close()
	return g.legacy.Close()
}

// Close ends every session and then writes out the audit records and the
// trace spans still queued: nothing is lost on a clean shutdown.
func (g *Gateway) Close(ctx context.Context) error {
	if g.startDeadline != nil {
		g.startDeadline.Stop()
	}
	g.endStartup()
	errLegacy := g.EndSessions()
	g.hookTools.close()
	if g.hookHTTP != nil {
		g.hookHTTP.CloseIdleConnections()
	}
	var errAudit error
	if g.audit != nil {
		errAudit = g.audit.Close(ctx)
	}
	errTrace := g.tracer.Shutdown(ctx)
	return errors.Join(errLegacy, errAudit, errTrace)
}
