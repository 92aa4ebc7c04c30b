// server.go is the proxy's listening side: both forms of the wire on one
// port. The per-path form is /tool/*, one exchange per connection; the
// framed form is the one connection at /. It relays every MCP exchange to
// the upstream, each answered exactly once.

package proxy

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// Options configure a Server.
type Options struct {
	Upstream *Upstream
	// InfoPath is the image's DIVERGE.md (default DefaultInfoPath).
	InfoPath string
	Logger   *slog.Logger
	// KeepAlive and KeepAliveTimeout are the framed connection's pings
	// (wire.Options; zero: the defaults).
	KeepAlive, KeepAliveTimeout time.Duration
	// Token, when set, is the bearer token every request of the wire
	// must carry (Authorization: Bearer), both forms: without it, anyone
	// who reaches the port lists and calls every tool (auth.go).
	Token []byte
	// Observe, when set, is told of each MCP exchange relayed, both
	// forms: the program hangs a trace span on it.
	Observe ExchangeObserver
}

// ExchangeObserver is told of an MCP exchange as it begins, with its
// method and params (read, never changed). It may return a context
// carrying what it started. The function it returns is called with the
// upstream's JSON-RPC code (0 for a result), or failed when the upstream
// gave no answer.
type ExchangeObserver func(ctx context.Context, method string, params []byte) (context.Context, func(code int64, failed bool))

// Server serves the wire in front of one upstream.
type Server struct {
	up       *Upstream
	infoPath string
	log      *slog.Logger
	gate     *SecretsGate

	keepAlive, keepAliveTimeout time.Duration

	token     []byte // SHA-256 of Options.Token (nil: none asked)
	observe   ExchangeObserver
	framed    atomic.Bool // a framed connection is open
	container container
	// asker is the begun tools scope the server's requests are relayed
	// on (ask.go), nil while there is none; askerMu holds the Begun and
	// the setting of asker together (answerBegin).
	askerMu sync.Mutex
	asker   atomic.Pointer[wire.Responder]
	pairs   pairs   // the program's database connections (pairs.go)
	daemons daemons // the program's daemon connections (daemon.go)
}

// NewServer prepares a proxy. The image's DIVERGE.md is read once here to
// learn whether it declares secrets: if it does, every MCP exchange waits
// at the gate until the first Fed.
func NewServer(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.InfoPath == "" {
		o.InfoPath = DefaultInfoPath
	}
	info, found, err := LoadInfo(o.InfoPath)
	if err != nil {
		o.Logger.Warn("proxy: DIVERGE.md does not parse; Info will say so", "path", o.InfoPath, "err", err)
	}
	required := found && err == nil && len(info.Secrets) > 0
	if required {
		o.Logger.Info("proxy: the image declares secrets; MCP exchanges wait for them", "secrets", len(info.Secrets))
	}
	s := &Server{up: o.Upstream, infoPath: o.InfoPath, log: o.Logger, gate: NewGate(required),
		keepAlive: o.KeepAlive, keepAliveTimeout: o.KeepAliveTimeout, token: tokenDigest(o.Token), observe: o.Observe}
	if s.up != nil {
		s.up.SetAsk(s.ask)
	}
	return s
}

// ServeHTTP routes the two forms.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		s.log.Warn("proxy: a request without the wire's token refused", "remote", r.RemoteAddr, "path", r.URL.Path)
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgate proxy"`)
		http.Error(w, "this wire needs its bearer token", http.StatusUnauthorized)
		return
	}
	if method, check, ok := wiremcp.PathMethod(r.URL.Path); ok {
		s.servePath(w, r, method, check)
		return
	}
	switch r.URL.Path {
	case "/":
		s.serveFramed(w, r)
	case wire.PathNotifications:
		s.serveNotificationsPath(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveFramed accepts a framed connection when none is open; while one
// is, every other upgrade is refused with 409 before it happens, and the
// refusal logged.
func (s *Server) serveFramed(w http.ResponseWriter, r *http.Request) {
	if !s.framed.CompareAndSwap(false, true) {
		s.log.Warn("proxy: a second framed connection refused while one is open", "remote", r.RemoteAddr)
		http.Error(w, "a framed connection is open; one at a time", http.StatusConflict)
		return
	}
	// The slot is free before the end is logged, so that whoever reads the
	// log line may dial again at once.
	release := sync.OnceFunc(func() { s.framed.Store(false) })
	defer release()
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		// Nothing was accepted (a probe's plain GET, a handshake the library
		// refused): the slot is free again.
		s.log.Warn("proxy: framed upgrade failed", "err", err)
		return
	}
	ws.SetReadLimit(-1)
	s.log.Info("proxy: framed connection open", "remote", r.RemoteAddr)
	var begin beginState
	begin.init()
	err = wire.Serve(r.Context(), ws, framedHandler{s: s, begin: &begin}, &wire.Options{Logger: s.log, ReadLimit: -1,
		KeepAlive: s.keepAlive, KeepAliveTimeout: s.keepAliveTimeout})
	release()
	s.log.Info("proxy: framed connection ended", "remote", r.RemoteAddr, "err", err)
}

// exchange relays one MCP request, once, and turns the outcome into the
// wire's answer: the upstream's result or error as it sent them, or -32603
// with the reason when there was no answer. It returns only once the
// streams of form have written every notification the server sent before
// its answer (order.go), so that the answer is written after them.
func (s *Server) exchange(ctx context.Context, form streamForm, method string, params []byte) wire.Response {
	if !s.gate.IsOpen() {
		s.log.Debug("proxy: exchange waits for the secrets", "method", method)
	}
	if err := s.gate.Wait(ctx); err != nil {
		return wire.ErrorResponse(-32603, "waiting for secrets: "+err.Error())
	}
	var done func(int64, bool)
	if s.observe != nil {
		ctx, done = s.observe(ctx, method, params)
	}
	result, rpcErr, err := s.up.Exchange(ctx, method, params)
	s.up.hub.await(ctx, form, s.up.hub.mark())
	if done != nil {
		var code int64
		if rpcErr != nil {
			code = rpcErr.Code
		}
		done(code, err != nil)
	}
	switch {
	case err != nil:
		return wire.ErrorResponse(-32603, err.Error())
	case rpcErr != nil:
		return wire.Response{Error: rpcErr}
	default:
		return wire.Response{Result: result}
	}
}

// servePath serves one exchange of the per-path form.
func (s *Server) servePath(w http.ResponseWriter, r *http.Request, method string, check func([]byte) error) {
	err := wire.ServePath(w, r, func(ctx context.Context, params []byte) wire.Response {
		if err := check(params); err != nil {
			return wire.ErrorResponse(-32602, err.Error())
		}
		return s.exchange(ctx, formPath, method, params)
	})
	if err != nil {
		s.log.Debug("proxy: per-path exchange", "path", r.URL.Path, "err", err)
	}
}

// serveNotificationsPath streams the upstream's notifications for as long
// as the client keeps the path open.
func (s *Server) serveNotificationsPath(w http.ResponseWriter, r *http.Request) {
	err := wire.ServeSubscription(w, r, func(ctx context.Context, send func(wire.Response) error) {
		_ = s.streamNotifications(ctx, formPath, send)
	})
	if err != nil {
		s.log.Debug("proxy: notifications path", "err", err)
	}
}

// streamNotifications sends every notification from now on; if the
// upstream cannot be reached it sends one error and returns.
func (s *Server) streamNotifications(ctx context.Context, form streamForm, send func(wire.Response) error) error {
	if err := s.gate.Wait(ctx); err != nil {
		return err
	}
	sub := s.up.hub.openStream(form)
	defer sub.close()
	s.log.Debug("proxy: notification stream open")
	defer s.log.Debug("proxy: notification stream closed")
	if err := s.up.Connect(ctx); err != nil {
		if errors.Is(err, ctx.Err()) {
			return err
		}
		return send(wire.ErrorResponse(-32603, err.Error()))
	}
	for {
		msg, ok, err := sub.next(ctx) // reports the last one written
		if !ok {
			return err
		}
		if err := send(wire.Response{Result: msg}); err != nil {
			return err
		}
	}
}
