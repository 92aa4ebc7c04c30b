// session.go is the life of one upstream session. It is dialled by the
// first exchange that finds none; others wait for that dial rather than
// start their own. It is shared by every exchange while it lives, and
// retired when it dies or an exchange on it gets no answer. A retired
// session takes no new exchanges and is closed once the last one using it
// returns, so a transport hiccup on one call does not kill the calls beside
// it.

package proxy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/internal/tick"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/stdio"
)

// exitWait bounds how long an error waits to learn a stdio server's exit
// status after its output ended.
const exitWait = 250 * time.Millisecond

type session struct {
	client *mcp.Client
	conn   mcp.Conn
	// gone is closed when the conn's far end is gone (a stdio server's
	// process exited); nil for HTTP.
	gone <-chan struct{}
	// sessionless: the server speaks 2026-07-28 (sessionless.go), and
	// stopListen ends the session's subscriptions/listen.
	sessionless bool
	stopListen  context.CancelFunc
	// headerParams are the tools' x-mcp-header arguments, by name, as
	// the tools/list answers showed them (sessionless.go).
	mu           sync.Mutex
	headerParams map[string][]mcp.HeaderParam

	refs      int  // exchanges using it; under Upstream.mu
	retired   bool // under Upstream.mu
	closeOnce sync.Once
}

// processConn is a stdio server's conn (see childConn).
type processConn interface {
	Done() <-chan struct{}
	ExitErr() error
}

func (s *session) alive() bool {
	select {
	case <-s.client.Done():
		return false
	case <-s.gone:
		return false
	default:
		return true
	}
}

func (s *session) close() {
	s.closeOnce.Do(func() {
		if s.stopListen != nil {
			s.stopListen()
		}
		_ = s.client.Close()
	})
}

// explain adds what is known of why the session ended to an exchange's
// error: a stdio server's exit status says more than "client closed".
func (s *session) explain(err error) error {
	pc, ok := s.conn.(processConn)
	ended := errors.Is(err, mcp.ErrClosed) || errors.Is(err, stdio.ErrClosed) || errors.Is(err, syscall.EPIPE)
	if !ok || !ended {
		return err
	}
	if tick.Sleep(exitWait, pc.Done()) {
		return err // the process did not exit in time
	}
	if exit := pc.ExitErr(); exit != nil {
		return fmt.Errorf("the server process exited (%v): %w", exit, err)
	}
	return fmt.Errorf("the server process exited: %w", err)
}

// acquire returns a live session with a reference held, dialling one if
// there is none.
func (u *Upstream) acquire(ctx context.Context) (*session, error) {
	if s, err := u.live(); s != nil || err != nil {
		return s, err
	}
	select {
	case u.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-u.dialing }()
	// Whoever held the slot before may have dialled for us.
	if s, err := u.live(); s != nil || err != nil {
		return s, err
	}
	s, err := u.dialSession(ctx)
	if err == nil {
		if err = u.install(s); err != nil {
			s.close()
		}
	}
	switch {
	case err == nil:
		return s, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		return nil, err
	}
}

// live returns the current session with a reference held, nil if there is
// none alive, or ErrClosed.
func (u *Upstream) live() (*session, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil, ErrClosed
	}
	s := u.current
	if s == nil {
		return nil, nil
	}
	if !s.alive() {
		u.retireLocked(s)
		return nil, nil
	}
	s.refs++
	return s, nil
}

// dialSession opens a connection and initializes a session on it.
func (u *Upstream) dialSession(ctx context.Context) (*session, error) {
	conn, err := u.dial(ctx)
	if err != nil {
		return nil, &UnreachableError{Err: err}
	}
	s := &session{conn: conn}
	if pc, ok := conn.(processConn); ok {
		s.gone = pc.Done()
	}
	opts := mcp.ClientOptions{
		Info:           u.cfg.ClientInfo,
		Logger:         u.log,
		OnNotification: u.publishNote,
		// Without an AskFunc the client answers ping itself and every
		// other server-to-client request with -32601, and declares no
		// capability (sampling, roots, elicitation) it could not serve.
	}
	if ask := u.ask.Load(); ask != nil {
		opts.Capabilities = upstream.ClientCapabilities()
		opts.OnRequest = *ask
	}
	s.client = mcp.NewClient(conn, opts)
	era := u.cfg.Era
	if u.cfg.Kind == upstream.KindSSE {
		era = mcp.EraSession
	}
	era, err = s.client.Connect(ctx, era)
	if err != nil {
		s.close()
		what := "initialize"
		if era != mcp.EraSession {
			what = "connect"
		}
		return nil, &UnreachableError{Err: fmt.Errorf("%s: %w", what, s.explain(err))}
	}
	s.sessionless = era == mcp.EraSessionless
	u.log.Info("upstream session started", "kind", u.cfg.Kind, "protocol", s.client.ProtocolVersion(), "era", string(era))
	return s, nil
}

// install makes s the current session, with the caller's reference held,
// and watches it for its end.
func (u *Upstream) install(s *session) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return ErrClosed // the caller closes s
	}
	s.refs = 1
	u.current = s
	u.sessions[s] = struct{}{}
	u.wg.Go(func() { u.watch(s) })
	if s.sessionless {
		ctx, stop := context.WithCancel(u.ctx)
		s.stopListen = stop
		u.wg.Go(func() { u.listen(ctx, s, stop) })
	}
	return nil
}

// watch retires s as soon as it dies, so that the next exchange dials
// without first tripping over the dead session.
func (u *Upstream) watch(s *session) {
	select {
	case <-s.client.Done():
	case <-s.gone:
	case <-u.ctx.Done():
		return
	}
	u.log.Info("upstream session ended", "kind", u.cfg.Kind, "err", s.client.Err())
	u.retire(s)
}

func (u *Upstream) retire(s *session) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.retireLocked(s)
}

func (u *Upstream) retireLocked(s *session) {
	if s.retired {
		return
	}
	s.retired = true
	if u.current == s {
		u.current = nil
	}
	u.closeIfIdleLocked(s)
}

func (u *Upstream) release(s *session) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s.refs--
	u.closeIfIdleLocked(s)
}

// closeIfIdleLocked closes a retired session nobody uses any more. After
// Close, Close itself closes every session.
func (u *Upstream) closeIfIdleLocked(s *session) {
	if !s.retired || s.refs > 0 || u.closed {
		return
	}
	if _, ok := u.sessions[s]; !ok {
		return
	}
	delete(u.sessions, s)
	u.wg.Go(s.close)
}
