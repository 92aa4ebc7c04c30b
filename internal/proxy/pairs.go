// pairs.go is the Postgres pair (docs/wire.md 3.8): a program with no
// network reaches its database through the gateway. The program's driver
// connects to a loopback port the proxy listens on. The proxy mints an id
// (from 1, never reused while it lives) and opens its channel [0][id] on
// the begun scope. The gateway dials its database and opens its own channel
// [0][id]. From then on the driver's bytes go out as channel responses on
// the client-opened channel, as they come, and what the gateway sends on
// the proxy-opened channel is written to the driver's socket, in order.
// Nothing is parsed. Either end closing closes the other: the driver's
// close finishes the client-opened channel; the gateway finishing the
// proxy-opened one closes the driver's socket. A driver that connects while
// no gateway has begun a framed connection is closed at once.

package proxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/wire"
)

// pairChunk is the most of the driver's bytes one channel response
// carries; pairQueue the most of the gateway's that wait unwritten before
// the connection stops reading (wire.Channel.LimitQueue: back-pressure).
const (
	pairChunk = 64 << 10
	pairQueue = 1 << 20
)

// pairs are the database connections of the program, by id.
type pairs struct {
	next atomic.Uint32
	mu   sync.Mutex
	open map[uint32]*pair
}

// pair is one driver's connection: waiting for the gateway's channel,
// then relayed.
type pair struct {
	driver net.Conn
	paired atomic.Bool
	done   chan struct{} // closed when the pair is over
	once   sync.Once
}

func (p *pair) end() {
	p.once.Do(func() {
		_ = p.driver.Close()
		close(p.done)
	})
}

// ServePostgres accepts the program's database connections on ln until
// it is closed (then it returns nil) and pairs each with the gateway's
// database.
func (s *Server) ServePostgres(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go s.pairDriver(c)
	}
}

// pairDriver opens the proxy's channel for a new driver connection and
// writes what the gateway sends on it to the driver, until either ends.
func (s *Server) pairDriver(c net.Conn) {
	id := s.pairs.next.Add(1)
	r := s.currentAsker()
	if r == nil {
		s.log.Info("proxy: a database connection with no gateway to pair it; closed", "conn", id)
		_ = c.Close()
		return
	}
	p := &pair{driver: c, done: make(chan struct{})}
	s.pairs.mu.Lock()
	if s.pairs.open == nil {
		s.pairs.open = map[uint32]*pair{}
	}
	s.pairs.open[id] = p
	s.pairs.mu.Unlock()
	defer func() {
		s.pairs.mu.Lock()
		delete(s.pairs.open, id)
		s.pairs.mu.Unlock()
		p.end()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.done:
		case <-r.Context().Done(): // the framed connection ended
		}
		cancel()
	}()
	ch, err := r.OpenChannel(ctx, wire.ProxyPostgres{ConnID: id}.Append(nil))
	if err != nil {
		s.log.Info("proxy: the database connection's channel could not be opened", "conn", id, "err", err)
		return
	}
	ch.LimitQueue(pairQueue)
	s.log.Debug("proxy: database connection waits for the gateway", "conn", id)
	for {
		_, err := ch.CopyNext(ctx, c)
		switch {
		case errors.Is(err, wire.ErrBareFinish):
			s.log.Info("proxy: the gateway declined a database connection", "conn", id)
			return
		case err != nil:
			return // the gateway finished (its database went away), the connection ended, or the driver's socket did
		}
	}
}

// servePostgresChannel is the gateway's half of pair id: the driver's
// bytes go out on r, as they come, until the driver closes; then r is
// finished. An unknown id, or one already paired, is a bare finish.
func (s *Server) servePostgresChannel(ctx context.Context, r *wire.Responder, id uint32) {
	s.pairs.mu.Lock()
	p := s.pairs.open[id]
	s.pairs.mu.Unlock()
	if p == nil || !p.paired.CompareAndSwap(false, true) {
		s.log.Info("proxy: a database channel for no waiting connection; bare finish", "conn", id)
		return
	}
	s.log.Debug("proxy: database connection paired", "conn", id)
	stop := context.AfterFunc(ctx, p.end) // the framed connection ended
	defer stop()
	if _, err := r.Pump(p.driver, pairChunk); err != nil {
		if !errors.Is(err, net.ErrClosed) {
			s.log.Debug("proxy: database connection relay", "conn", id, "err", err)
		}
		p.end() // a response could not be written, or the driver's read failed
	}
	// The finish tells the gateway the driver closed.
}
