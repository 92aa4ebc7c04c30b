// sessions.go gives each front session an upstream session of its own when
// a backend is configured `session: per-client`. A stdio server may keep
// state per client (a shell, a browser, a REPL), or an HTTP server bind
// state to its session id. Such a server must not see two clients as one.
//
// The backend's own connection stays the catalogue connection (sync,
// list_changed, ping) and serves calls that have no session to be keyed to
// (stateless HTTP, where each request is a session of its own). A front
// session's first call dials and initializes its upstream session: a new
// child process, or a new Streamable HTTP or SSE session. It has its own
// catalogue.Inflight, so that the progress, log messages and server
// requests of that upstream session reach that front session's calls only.
// Its later calls reuse it.
//
// An upstream session is closed (the child's process group ended, the HTTP
// session sent DELETE) when its front session ends: DELETE, the front's
// idle reaper or eviction, the end of stdio. It is closed when it had no
// call for the idle timeout, for clients that vanish without DELETE. It is
// closed when evicted to make room under the cap, and when the backend's
// connection ends or the backend is removed. At the cap, the least recently
// used upstream session with no call in flight makes room; if every one is
// busy, the call is refused (-32603 with data.backend).

package backends

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Defaults of the per-client session settings.
const (
	DefaultSessionIdleTimeout = 10 * time.Minute
	DefaultSessionMax         = 64
)

// ErrSessionsBusy is why a call is refused when every per-client upstream
// session is in use and the cap allows no more.
var ErrSessionsBusy = errors.New("every per-client upstream session is busy")

// errSessionsClosed refuses a call routed while the backend's connection
// ends.
var errSessionsClosed = errors.New("connection ending")

// OpenSessions is the number of per-client upstream sessions open (or
// opening) now; 0 for a shared backend or one that is down.
func (b *Backend) OpenSessions() int {
	b.mu.Lock()
	p := b.sessions
	b.mu.Unlock()
	if p == nil {
		return 0
	}
	return p.open()
}

// sessionPool holds the per-client upstream sessions of one connection of
// a backend; it implements catalogue.Router.
type sessionPool struct {
	b      *Backend
	ctx    context.Context // ends with the backend's connection
	cancel context.CancelFunc
	idle   time.Duration
	max    int
	wg     sync.WaitGroup // one run per upstream session

	// shared is the backend's own connection: its initialize result is
	// the server's, for an upstream session resumed without one.
	shared *mcp.Client

	mu     sync.Mutex
	closed bool
	byKey  map[poolKey]*upstreamSession
	// resume holds, for front sessions resumed from another replica, the
	// upstream session to take up at their first call (resume.go).
	resume map[*mcp.Session]UpstreamSession
}

// poolKey is whose an upstream session is: a front session's (session:
// per-client), a principal's (identity: per_user), or a principal's front
// session's (both).
type poolKey struct {
	front     *mcp.Session
	principal string
}

// upstreamSession is one front session's (or principal's) upstream
// session.
type upstreamSession struct {
	key   poolKey
	front *mcp.Session // key.front: nil for a principal's
	// personal is the principal's credential it was opened with (none
	// for a shared backend): a call that finds another retires it
	// (personal.go).
	personal credential
	ready    chan struct{} // closed once dialled and initialized, or failed
	// Set before ready is closed.
	up   catalogue.Session
	conn *mcphttp.StreamableConn // nil unless the backend is HTTP
	err  error

	stop     chan struct{} // closed to evict (stopLocked)
	busy     int           // calls in flight; guarded by sessionPool.mu
	lastUsed time.Time     // guarded by sessionPool.mu
	// revoked is closed once its principal is revoked (nil: never).
	revoked <-chan struct{}
	// stopped: stop is closed; retired: out of the pool, stopped once its
	// last call ends. Guarded by sessionPool.mu.
	stopped, retired bool
}

// stopLocked ends u, once. p.mu is held.
func (u *upstreamSession) stopLocked() {
	if !u.stopped {
		u.stopped = true
		close(u.stop)
	}
}

// frontDone is what ends u with its front session (nil: nothing, for a
// principal's).
func (u *upstreamSession) frontDone() <-chan struct{} {
	if u.front == nil {
		return nil
	}
	return u.front.Done()
}

func newSessionPool(ctx context.Context, b *Backend, shared *mcp.Client) *sessionPool {
	p := &sessionPool{b: b, idle: b.spec.SessionIdleTimeout, max: b.spec.SessionMax, shared: shared,
		byKey: map[poolKey]*upstreamSession{}, resume: map[*mcp.Session]UpstreamSession{}}
	if p.idle <= 0 {
		p.idle = DefaultSessionIdleTimeout
	}
	if p.max <= 0 {
		p.max = DefaultSessionMax
	}
	p.ctx, p.cancel = context.WithCancel(ctx)
	return p
}

func (p *sessionPool) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byKey)
}

// Route gives r's front session (or its principal, for a per_user
// backend) its upstream session, opening it on the first call. A request
// without a lasting session (stateless HTTP) to a shared backend goes on
// the shared connection.
func (p *sessionPool) Route(ctx context.Context, r *mcp.Request) (catalogue.Session, func(), error) {
	var key poolKey
	var personal credential
	if p.b.spec.Identity.PerUser() {
		var err error
		if personal, err = p.b.personal(ctx, r); err != nil {
			return catalogue.Session{}, nil, err
		}
		key.principal = personal.principal
		if p.b.spec.Session == upstream.SessionPerClient && r != nil {
			key.front = r.Session
		}
	} else {
		if r == nil || r.Session == nil {
			return catalogue.Session{}, nil, nil
		}
		key.front = r.Session
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return catalogue.Session{}, nil, errSessionsClosed
	}
	u := p.byKey[key]
	if u != nil && u.personal != personal {
		// The principal stored another credential (or an admin did): the
		// session opened with the old one ends once its calls have.
		p.retireLocked(u)
		u = nil
	}
	if u == nil {
		if key.front != nil {
			select {
			case <-key.front.Done(): // its upstream session would end at once
				p.mu.Unlock()
				return catalogue.Session{}, nil, mcp.ErrSessionClosed
			default:
			}
		}
		if len(p.byKey) >= p.max && !p.evictLocked() {
			p.mu.Unlock()
			err := fmt.Errorf("%w (%d open, the backend's session max)", ErrSessionsBusy, p.max)
			return catalogue.Session{}, nil, &catalogue.RouteError{Shown: err.Error(), Err: err}
		}
		u = &upstreamSession{key: key, front: key.front, personal: personal, ready: make(chan struct{}), stop: make(chan struct{}), lastUsed: time.Now()}
		if key.principal != "" && p.b.opts.Revoked != nil {
			u.revoked = p.b.opts.Revoked(key.principal)
		}
		p.byKey[key] = u
		p.wg.Add(1)
		go p.run(u)
	}
	u.busy++
	p.mu.Unlock()

	var once sync.Once
	release := func() {
		once.Do(func() {
			p.mu.Lock()
			u.busy--
			u.lastUsed = time.Now()
			if u.retired && u.busy == 0 {
				u.stopLocked()
			}
			p.mu.Unlock()
		})
	}
	select {
	case <-u.ready:
	case <-ctx.Done():
		release()
		return catalogue.Session{}, nil, ctx.Err()
	}
	if u.err != nil {
		release()
		return catalogue.Session{}, nil, u.err
	}
	return u.up, release, nil
}

// retireLocked takes u out of the pool: no call picks it again, and it
// ends once its calls in flight have. p.mu is held.
func (p *sessionPool) retireLocked(u *upstreamSession) {
	if p.byKey[u.key] == u {
		delete(p.byKey, u.key)
	}
	u.retired = true
	if u.busy == 0 {
		u.stopLocked()
	}
}

// evictLocked ends the least recently used upstream session with no call
// in flight, and reports whether there was one. p.mu is held.
func (p *sessionPool) evictLocked() bool {
	var lru *upstreamSession
	for _, u := range p.byKey {
		if u.busy == 0 && (lru == nil || u.lastUsed.Before(lru.lastUsed)) {
			lru = u
		}
	}
	if lru == nil {
		return false
	}
	delete(p.byKey, lru.key)
	lru.stopLocked()
	return true
}

// forget takes u out of the pool, unless it is gone already.
func (p *sessionPool) forget(u *upstreamSession) {
	p.mu.Lock()
	if p.byKey[u.key] == u {
		delete(p.byKey, u.key)
	}
	p.mu.Unlock()
}

// run opens u, then keeps it until it has to end, and closes it. It is
// out of the pool before it is closed, so that no new call picks it.
func (p *sessionPool) run(u *upstreamSession) {
	defer p.wg.Done()
	up, conn, err := p.dial(u)
	if err != nil {
		u.err = err
		// Forgotten before its waiters hear of the failure: one that
		// counts the open sessions next must not count this one.
		p.forget(u)
		close(u.ready)
		p.b.log.Warn("backend: upstream session failed to open", "err", err)
		return
	}
	u.up, u.conn = up, conn
	client := up.Client
	close(u.ready)
	p.b.log.Debug("backend: upstream session opened", "open", p.open())
	why := p.keep(u, client)
	p.forget(u)
	if why == whyRevoked {
		p.b.forgetExchanged(u.key.principal)
	}
	if conn != nil && u.front != nil && u.front.Resumable() && !u.front.EndedByClient() {
		// Another replica may hold the front session now: its upstream
		// session stays open for it (the server's idle timeout ends it
		// if nobody comes back).
		_ = conn.Detach()
	}
	_ = client.Close()
	p.b.log.Debug("backend: upstream session closed", "why", why, "open", p.open())
}

// whyRevoked is why a principal's upstream session ends when they are
// revoked: their exchanged token goes with it.
const whyRevoked = "its principal was revoked"

// keep waits for a reason to end u and returns it.
func (p *sessionPool) keep(u *upstreamSession, client *mcp.Client) string {
	idle := time.NewTimer(p.idle)
	defer idle.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return "backend connection ended"
		case <-u.frontDone():
			return "front session ended"
		case <-u.revoked:
			return whyRevoked
		case <-u.stop:
			if u.retired {
				return "retired (another credential, or its principal revoked)"
			}
			return "evicted at the session max"
		case <-client.Done():
			return "upstream session ended"
		case <-idle.C:
			p.mu.Lock()
			unused := time.Since(u.lastUsed)
			if u.busy == 0 && unused >= p.idle {
				if p.byKey[u.key] == u {
					delete(p.byKey, u.key)
				}
				p.mu.Unlock()
				return "idle"
			}
			p.mu.Unlock()
			next := p.idle - unused
			if next <= 0 { // busy past the timeout: look again later
				next = p.idle
			}
			idle.Reset(next)
		}
	}
}

// dial opens u's upstream session: connect, initialize. The secrets of
// the spec, and the principal's credential, are scrubbed from its error,
// which reaches the caller.
func (p *sessionPool) dial(u *upstreamSession) (catalogue.Session, *mcphttp.StreamableConn, error) {
	front := u.front
	start, cancel := context.WithTimeout(p.ctx, p.b.opts.StartTimeout)
	defer cancel()
	secrets := p.b.secrets
	if u.personal.value != "" {
		secrets = withSecret(secrets, u.personal.value)
	}
	conn, err := p.b.dial(p.ctx, u.personal)
	if err != nil {
		return catalogue.Session{}, nil, errors.New(scrub(err.Error(), secrets))
	}
	httpConn, _ := conn.(*mcphttp.StreamableConn)
	p.mu.Lock()
	resume, resuming := p.resume[front]
	delete(p.resume, front)
	p.mu.Unlock()
	inflight := catalogue.NewInflight()
	client := mcp.NewClient(conn, mcp.ClientOptions{
		Info:         mcp.Implementation{Name: "mcpgate", Version: "1"},
		Capabilities: upstream.ClientCapabilities(),
		Logger:       p.b.log,
		OnRequest:    inflight.OnRequest,
		// The catalogue is the shared connection's: list_changed and
		// anything else unrelated to a call is not relayed from here.
		OnNotification: func(m *jsonrpc.Message) { inflight.OnNotification(m) },
	})
	if resuming && httpConn != nil {
		httpConn.Resume(start, resume.ID, resume.Version)
		client.Resume(resume.Version, p.shared.InitializeResult())
		p.b.log.Debug("backend: upstream session taken up from another replica")
	} else if err := p.b.connect(start, client); err != nil {
		_ = client.Close()
		return catalogue.Session{}, nil, errors.New(scrub(err.Error(), secrets))
	}
	return catalogue.Session{Client: client, Inflight: inflight}, httpConn, nil
}

// close ends every upstream session and waits for them.
func (p *sessionPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
}

// openSessionPool starts the per-client sessions of one connection.
func (b *Backend) openSessionPool(ctx context.Context, shared *mcp.Client) *sessionPool {
	p := newSessionPool(ctx, b, shared)
	b.mu.Lock()
	b.sessions = p
	b.mu.Unlock()
	return p
}

// closeSessionPool ends them with the connection.
func (b *Backend) closeSessionPool(p *sessionPool) {
	b.mu.Lock()
	if b.sessions == p {
		b.sessions = nil
	}
	b.mu.Unlock()
	p.close()
}
