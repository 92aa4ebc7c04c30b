// daemon.go is the Daemon pair (docs/wire.md 3.9): a program that talks to
// a service on the gateway's side dials ws://127.0.0.1:PORT/daemon on the
// proxy (no credential) and speaks frames of the wire's own format, one per
// binary message. It is exactly like the Postgres pair (pairs.go), with the
// proxy's channel [1][id] and the gateway's [2][id]. The program's messages
// go out as channel responses on the gateway's channel, one message each.
// The gateway's channel responses on the proxy's are written to the
// program, one message each. A message that is not a frame, or an
// authorization frame, ends that connection; text messages mean nothing and
// are skipped, as on the wire itself.

package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/wire"
)

// DaemonPath is where the program dials the Daemon pair.
const DaemonPath = "/daemon"

// daemons are the program's daemon connections, by id.
type daemons struct {
	next atomic.Uint32
	mu   sync.Mutex
	open map[uint32]*daemonConn
}

type daemonConn struct {
	ws     *websocket.Conn
	paired atomic.Bool
	done   chan struct{}
	once   sync.Once
}

func (d *daemonConn) end(code websocket.StatusCode, why string) {
	d.once.Do(func() {
		_ = d.ws.Close(code, why)
		close(d.done)
	})
}

// DaemonHandler serves the program's daemon connections (at DaemonPath).
func (s *Server) DaemonHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(DaemonPath, s.serveDaemon)
	return mux
}

// ServeDaemons serves DaemonHandler on ln until it is closed.
func (s *Server) ServeDaemons(ln net.Listener) error {
	err := mcphttp.NewServer(s.DaemonHandler()).Serve(ln)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// serveDaemon is one daemon connection of the program: paired, then the
// gateway's messages written to it as they come.
func (s *Server) serveDaemon(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(-1)
	id := s.daemons.next.Add(1)
	d := &daemonConn{ws: ws, done: make(chan struct{})}
	defer d.end(websocket.StatusNormalClosure, "")
	asker := s.currentAsker()
	if asker == nil {
		s.log.Info("proxy: a daemon connection with no gateway to pair it; closed", "conn", id)
		d.end(websocket.StatusTryAgainLater, "no gateway is connected")
		return
	}
	s.daemons.mu.Lock()
	if s.daemons.open == nil {
		s.daemons.open = map[uint32]*daemonConn{}
	}
	s.daemons.open[id] = d
	s.daemons.mu.Unlock()
	defer func() {
		s.daemons.mu.Lock()
		delete(s.daemons.open, id)
		s.daemons.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-d.done:
		case <-asker.Context().Done():
		}
		cancel()
	}()
	ch, err := asker.OpenChannel(ctx, wire.ProxyDaemon{ConnID: id}.Append(nil))
	if err != nil {
		return
	}
	ch.LimitQueue(pairQueue)
	for {
		msg, err := ch.Next(ctx)
		switch {
		case errors.Is(err, wire.ErrBareFinish):
			s.log.Info("proxy: the gateway declined a daemon connection", "conn", id)
			d.end(websocket.StatusTryAgainLater, "the gateway declined it")
			return
		case err != nil:
			d.end(websocket.StatusGoingAway, "the daemon connection ended")
			return
		}
		if err := ws.Write(ctx, websocket.MessageBinary, msg); err != nil {
			return
		}
	}
}

// serveDaemonChannel is the gateway's half of daemon connection id: the
// program's frames go out on r, one message each, until the program
// closes or sends what is not a frame. An unknown id, or one already
// paired, is a bare finish.
func (s *Server) serveDaemonChannel(ctx context.Context, r *wire.Responder, id uint32) {
	s.daemons.mu.Lock()
	d := s.daemons.open[id]
	s.daemons.mu.Unlock()
	if d == nil || !d.paired.CompareAndSwap(false, true) {
		s.log.Info("proxy: a daemon channel for no waiting connection; bare finish", "conn", id)
		return
	}
	stop := context.AfterFunc(ctx, func() { d.end(websocket.StatusGoingAway, "the gateway's connection ended") })
	defer stop()
	for {
		typ, msg, err := d.ws.Read(ctx)
		if err != nil {
			d.end(websocket.StatusNormalClosure, "")
			return
		}
		if typ != websocket.MessageBinary {
			continue
		}
		f, err := wire.ParseFrame(msg)
		switch {
		case err != nil:
			s.log.Info("proxy: a daemon message that is not a frame; connection ended", "conn", id, "err", err)
			d.end(websocket.StatusUnsupportedData, "every message must be one frame of the wire")
			return
		case f.Type == wire.TypeAuthorization:
			s.log.Info("proxy: an authorization frame on a daemon connection; connection ended", "conn", id)
			d.end(websocket.StatusPolicyViolation, "authorization is not used on this connection")
			return
		}
		if err := r.Respond(msg); err != nil {
			d.end(websocket.StatusGoingAway, "the gateway's connection ended")
			return
		}
	}
}
