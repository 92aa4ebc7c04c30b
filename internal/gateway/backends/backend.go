// backend.go is the Backend: one backend server kept connected and its
// catalogue kept in the front, with a reconnection loop that survives
// anything the server does.

package backends

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Options configures a Backend or a Set.
type Options struct {
	Logger  *slog.Logger // default: discard
	Backoff upstream.Backoff
	// StartTimeout bounds dialing, initialize and the first catalogue sync
	// (default 30s): a server that hangs at start is treated as failed.
	StartTimeout time.Duration
	// PingInterval is how often an up backend is pinged (default 30s;
	// negative: never). A failed ping ends the connection, so a server that
	// vanished without closing it (an HTTP server gone from the network)
	// is noticed.
	PingInterval time.Duration
	// Claims is the ledger of the front's entries shared by the Set's
	// backends (default: a new one). Give one when the front needs it
	// before the Set exists: its Complete routes completion/complete.
	Claims *catalogue.Claims
	// Observe, if set, is told of each call relayed to a backend (see
	// catalogue.Observer): the gateway traces them.
	Observe catalogue.Observer
	// Pin, if set, decides which changed tools and prompts are held
	// (catalogue/pin.go).
	Pin catalogue.Pinner
	// Credentials gives per_user backends each principal's credential
	// (nil: their calls are answered that none is stored).
	Credentials CredentialSource
	// CredentialsPage is the URL of the page where a person stores
	// theirs, named in that answer (nil: an admin is asked to).
	CredentialsPage func() string
	// Revoked, if set, is closed once principal is revoked: their
	// upstream sessions (a per_user backend's children) then end.
	Revoked func(principal string) <-chan struct{}
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Backoff = o.Backoff.WithDefaults()
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.PingInterval == 0 {
		o.PingInterval = 30 * time.Second
	}
	return o
}

// listChanged are the notifications after which the catalogue is synced
// again.
var listChanged = map[string]bool{
	mcp.ToolsListChanged:     true,
	mcp.ResourcesListChanged: true,
	mcp.PromptsListChanged:   true,
}

// ErrConnectionEnded is the reason given when the server closed the
// connection without saying why.
var ErrConnectionEnded = errors.New("connection ended")

// Backend keeps one backend server connected and relayed into a front.
type Backend struct {
	spec    Spec
	front   *mcp.Server
	claims  *catalogue.Claims
	opts    Options
	log     *slog.Logger
	secrets []string

	changed  *signal
	onChange func() // the Set's, if any
	// resync asks the connection up to list the catalogue again: the
	// backend said its lists changed, or the gateway asks (Set.Resync).
	// One pending request covers any number.
	resync chan struct{}

	mu     sync.Mutex
	status Status
	// sessions are the per-client upstream sessions of the current
	// connection, or nil; guarded by mu.
	sessions *sessionPool
	// era is what the backend's server was learned to speak (era.go).
	era eraCache
	// http is the HTTP client of every connection to the backend, its
	// idle connections closed when Run returns.
	http *http.Client
	// oauthClient wraps http with the backend's token, made at the first
	// connection: the token is asked for once and renewed as it expires,
	// not once per connection.
	oauthClient func() *http.Client

	// exchanges are the per_user principals' exchanged tokens (personal.go),
	// by principal; guarded by xmu.
	xmu       sync.Mutex
	exchanges map[string]*exchangedToken
	// actors names whom each principal's latest token is of, read once
	// per token (personal.go); guarded by xmu.
	actors map[string]actor
	// arrived is told when a person's token was exchanged while the
	// backend was down: its connection is tried again at once. arriving:
	// such an exchange is under way (Arrive).
	arrived  *signal
	arriving atomic.Bool
}

// New returns a backend relaying spec's server into front; claims is the
// ledger shared by every backend of that front (nil for one of its own).
// Call Run to start it.
func New(spec Spec, front *mcp.Server, claims *catalogue.Claims, opts Options) *Backend {
	opts = opts.withDefaults()
	if claims == nil {
		claims = catalogue.NewClaims()
	}
	b := &Backend{
		spec: spec, front: front, claims: claims, opts: opts,
		log:     opts.Logger.With("backend", spec.Name),
		secrets: spec.secrets(),
		changed: newSignal(),
		arrived: newSignal(),
		resync:  make(chan struct{}, 1),
		status:  Status{Name: spec.Name, Kind: string(spec.Kind), Since: time.Now()},
		http:    mcphttp.NewHTTPClient(),
	}
	if spec.OAuth != nil {
		b.oauthClient = sync.OnceValue(func() *http.Client { return spec.OAuth.Client(b.http, spec.URL) })
	}
	return b
}

// Name is the backend's name.
func (b *Backend) Name() string { return b.spec.Name }

// Authorization is the backend's OAuth client of the authorization code
// grant (nil: none).
func (b *Backend) Authorization() *oauthclient.Authorization { return b.spec.Authorization }

// State is the backend's current state.
func (b *Backend) State() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status
}

// Changed is closed at the backend's next change of state.
func (b *Backend) Changed() <-chan struct{} { return b.changed.C() }

func (b *Backend) update(f func(*Status)) {
	b.mu.Lock()
	f(&b.status)
	b.mu.Unlock()
	b.changed.notify()
	if b.onChange != nil {
		b.onChange()
	}
}

func (b *Backend) setUp() {
	b.update(func(s *Status) { s.Up, s.Since, s.Connecting = true, time.Now(), false })
	b.log.Info("backend up")
}

func (b *Backend) setDown(err error) {
	msg := scrub(err.Error(), b.secrets)
	b.update(func(s *Status) {
		if s.Up {
			s.Since = time.Now()
		}
		s.Up, s.LastError, s.Connecting = false, msg, false
	})
	b.log.Warn("backend down", "err", msg)
}

// Run connects the backend and keeps it connected until ctx ends; its
// entries are then gone from the front. It returns nil when ctx ends.
func (b *Backend) Run(ctx context.Context) error {
	defer b.claims.Forget(b.spec.Name) // gone: its names are unknown now
	defer b.http.CloseIdleConnections()
	var delay time.Duration
	for {
		b.update(func(s *Status) { s.Connecting = true })
		arrived := b.arrived.C() // a person's token exchanged from now on
		uptime, err := b.connectOnce(ctx)
		if ctx.Err() != nil {
			b.update(func(s *Status) {
				if s.Up {
					s.Up, s.Since = false, time.Now()
				}
				s.Connecting = false
			})
			return nil
		}
		b.setDown(err)
		delay = b.opts.Backoff.Next(delay, uptime)
		var authorized <-chan struct{} // nil: never
		if a := b.spec.Authorization; a != nil {
			authorized = a.Authorized()
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		case <-authorized: // an admin authorized the gateway: at once
			t.Stop()
			delay = 0
		case <-arrived: // a person's token to connect with: at once
			t.Stop()
			delay = 0
		}
		b.update(func(s *Status) { s.Restarts++ })
	}
}

// connectOnce runs one connection: dial, initialize, sync, then serve
// until the connection ends. It returns how long the backend was up and
// why the connection ended (or failed to start).
func (b *Backend) connectOnce(ctx context.Context) (time.Duration, error) {
	start, cancel := context.WithTimeout(ctx, b.opts.StartTimeout)
	defer cancel()
	conn, err := b.dial(ctx, credential{value: b.catalogueCredential()})
	if err != nil {
		return 0, err
	}
	resync := b.resync
	inflight := catalogue.NewInflight()
	client := mcp.NewClient(conn, mcp.ClientOptions{
		Info:         mcp.Implementation{Name: "mcpgate", Version: "1"},
		Capabilities: upstream.ClientCapabilities(),
		Logger:       b.log,
		OnRequest:    inflight.OnRequest,
		OnNotification: func(m *jsonrpc.Message) {
			if inflight.OnNotification(m) {
				return
			}
			if listChanged[m.Method] {
				select { // one pending resync covers any number of notices
				case resync <- struct{}{}:
				default:
				}
			}
		},
	})
	defer client.Close()
	if err := b.connect(start, client); err != nil {
		return 0, err
	}
	var router catalogue.Router
	if b.spec.Session == upstream.SessionPerClient || b.spec.Identity.PerUser() {
		pool := b.openSessionPool(ctx, client)
		defer b.closeSessionPool(pool) // after Unsync, before client.Close
		router = pool
	}
	rb := catalogue.New(b.spec.Name, client, catalogue.Options{
		Prefix: b.spec.Prefix, MinRoleFor: b.spec.MinRoleFor, ShortFor: b.spec.ShortFor, Shapes: b.spec.Shapes, Claims: b.claims, Logger: b.log,
		Inflight: inflight, Router: router, Observe: b.opts.Observe, Kind: b.spec.Kind, CallTimeout: b.spec.CallTimeout,
		ValidateArguments: b.spec.ValidateArguments, Pin: b.opts.Pin,
	})
	if err := rb.Sync(start, b.front); err != nil {
		return 0, err
	}
	// Before client.Close: no entry outlives the session. A connection
	// that ended on its own leaves tombstones, so that calls to its
	// entries answer that the backend is unavailable until it is back.
	defer func() {
		if ctx.Err() != nil {
			rb.Unsync(b.front)
		} else {
			rb.Down(b.front)
		}
	}()
	b.setUp()
	up := time.Now()
	err = b.serve(ctx, client, rb, resync)
	return time.Since(up), err
}

// serve waits for the connection to end, syncing again on list_changed
// and pinging the server.
func (b *Backend) serve(ctx context.Context, client *mcp.Client, rb *catalogue.Mirror, resync chan struct{}) error {
	if client.Sessionless() {
		defer b.listen(ctx, client, resync)()
	}
	var ping <-chan time.Time
	if b.opts.PingInterval > 0 {
		t := time.NewTicker(b.opts.PingInterval)
		defer t.Stop()
		ping = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-client.Done():
			if err := client.Err(); err != nil {
				return err
			}
			return ErrConnectionEnded
		case <-resync:
			sctx, cancel := context.WithTimeout(ctx, b.opts.StartTimeout)
			if err := rb.Sync(sctx, b.front); err != nil {
				b.log.Warn("backend: resync failed", "err", scrub(err.Error(), b.secrets))
			}
			cancel()
		case <-ping:
			pctx, cancel := context.WithTimeout(ctx, b.opts.StartTimeout)
			err := client.Ping(pctx)
			cancel()
			// A server without ping (-32601) is alive; any other error,
			// including the transport's own -32603, means it is not.
			var je *jsonrpc.Error
			if err != nil && !(errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound) {
				return fmt.Errorf("ping: %w", err)
			}
		}
	}
}
