// conn.go is the multiplexer's core, shared by both roles: one WebSocket,
// one write turn that serializes frames, the table of open scopes, and the
// connection's end, which ends everything in it. The reader goroutine's
// routing is in route.go; what differs between the roles — who opens
// scopes, who answers them — is in client.go and server.go.

package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// DefaultReadLimit bounds one message when Options.ReadLimit is 0. MCP
// results carrying images run to megabytes; the WebSocket library's own
// default (32 KiB) would close the connection on them.
const DefaultReadLimit = 64 << 20

// keepBuffer is the largest read or write buffer kept between messages; a
// larger one was for a rare big message and is let go.
const keepBuffer = 1 << 20

// Options configure either role. The zero value is usable.
type Options struct {
	// Logger receives disregarded frames (at debug) and connection ends.
	// nil discards.
	Logger *slog.Logger
	// ReadLimit bounds one incoming message in bytes: 0 means
	// DefaultReadLimit, -1 means no limit. A bigger message is read to its
	// end and thrown away: a response to an exchange this side opened
	// ends that exchange with a *TooLargeError; anything else is
	// disregarded. The connection stays up.
	ReadLimit int64
	// KeepAlive is how long the connection may be quiet (nothing read)
	// before this side sends a WebSocket ping; KeepAliveTimeout is how
	// long it then waits for the pong before it ends the connection, its
	// peer gone (docs/wire.md 3.2). Zero means DefaultKeepAlive and
	// DefaultKeepAliveTimeout; a negative KeepAlive sends no pings.
	KeepAlive, KeepAliveTimeout time.Duration
}

// ErrPeerGone is why a connection ended whose peer answered no ping.
var ErrPeerGone = errors.New("wire: the peer is gone")

// The keepalive defaults: a vanished peer is noticed within a minute.
const (
	DefaultKeepAlive        = 30 * time.Second
	DefaultKeepAliveTimeout = 20 * time.Second
)

type role uint8

const (
	roleClient role = iota
	roleServer
)

// errAuthorization ends a server connection that receives a type-0 frame:
// the proxy connection has no authorization.
var errAuthorization = errors.New("wire: authorization frame on a connection that has none")

type conn struct {
	ws           *websocket.Conn
	role         role
	limit        int64 // Options.ReadLimit; -1 for none
	log          *slog.Logger
	serveScope   func(context.Context, *Responder, []byte) // server role
	serveChannel func(context.Context, *Responder, []byte)

	ctx    context.Context // ends when the connection does; parent of every exchange's
	cancel context.CancelFunc

	wturn chan struct{} // the write turn: one frame on the socket at a time
	wbuf  []byte        // guarded by wturn
	// The reader goroutine's (conn.read): a message's first bytes, the
	// rest of a long one, the limit on that, and a spare for a full buffer.
	first   [readInPlace + 1]byte
	rbuf    bytes.Buffer
	rlim    io.LimitedReader
	spare   [4096]byte
	lentMax int // the longest payload read for CopyNext
	// free holds payload buffers CopyNext is done with (recycle).
	free chan []byte

	// lastRead is when a message was last read (UnixNano): a quiet
	// connection is pinged (keepalive).
	lastRead atomic.Int64

	mu       sync.Mutex
	scopes   map[uint32]*Scope
	err      error   // set once the connection has ended; wraps ErrConnectionClosed
	gone     error   // set when the keepalive ended it; wraps ErrPeerGone
	pressure *stream // a bounded stream over its bound: the reader waits for it
	// stalled is set while the reader waits on back-pressure: reading
	// nothing, it would read no pong either, so the keepalive pauses.
	stalled atomic.Bool

	closing     chan struct{} // closed when the connection is being closed or has ended
	closingOnce sync.Once
	scopeNums   numbers // client role

	handlers sync.WaitGroup
}

func newConn(ctx context.Context, ws *websocket.Conn, r role, opts *Options) *conn {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ReadLimit == 0 {
		o.ReadLimit = DefaultReadLimit
	}
	// The limit is ours to apply (conn.read in route.go), frame by frame: the library's
	// would close the whole connection for one oversized answer.
	ws.SetReadLimit(-1)
	name := "client"
	if r == roleServer {
		name = "server"
	}
	c := &conn{
		ws:     ws,
		role:   r,
		limit:  o.ReadLimit,
		log:    o.Logger.With("role", name),
		wturn:  make(chan struct{}, 1),
		free:   make(chan []byte, freePayloads),
		scopes: make(map[uint32]*Scope),
	}
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.closing = make(chan struct{})
	c.lastRead.Store(time.Now().UnixNano())
	if o.KeepAlive >= 0 {
		if o.KeepAlive == 0 {
			o.KeepAlive = DefaultKeepAlive
		}
		if o.KeepAliveTimeout <= 0 {
			o.KeepAliveTimeout = DefaultKeepAliveTimeout
		}
		go c.keepAlive(o.KeepAlive, o.KeepAliveTimeout)
	}
	return c
}

// keepAlive pings the peer whenever the connection has been quiet for
// every, and ends the connection when a pong does not come within wait:
// a peer whose host vanished sends nothing, not even a close.
func (c *conn) keepAlive(every, wait time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if c.stalled.Load() || time.Since(time.Unix(0, c.lastRead.Load())) < every {
			continue
		}
		ctx, cancel := context.WithTimeout(c.ctx, wait)
		err := c.ws.Ping(ctx)
		cancel()
		if err != nil && c.ctx.Err() == nil {
			c.log.Info("wire: the peer is gone: no pong", "wait", wait.String())
			gone := fmt.Errorf("%w: no pong within %v", ErrPeerGone, wait)
			c.mu.Lock()
			c.gone = gone
			c.mu.Unlock()
			c.end(gone)
			_ = c.ws.CloseNow()
			return
		}
	}
}

// send writes one frame when it is this caller's turn. check runs with c.mu
// held just before the write, so that a frame for an exchange that ended
// meanwhile is never written: a number freed by a finish may already be
// the other side's again. ctx bounds only the wait for the turn.
func (c *conn) send(ctx context.Context, f Frame, check func() error) error {
	select {
	case c.wturn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.closedErr()
	}
	defer func() { <-c.wturn }()
	c.mu.Lock()
	err := c.err
	if err == nil && c.ctx.Err() != nil {
		err = ErrConnectionClosed // ending: nothing more is written
	}
	if err == nil && check != nil {
		err = check()
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.wbuf = AppendFrame(c.wbuf[:0], f)
	// The write is not bound by ctx: the library closes the connection when
	// a write's context ends, and one caller's impatience must not end
	// everyone's exchanges. Only the connection's end stops it.
	err = c.ws.Write(context.Background(), websocket.MessageBinary, c.wbuf)
	if cap(c.wbuf) > keepBuffer {
		c.wbuf = nil
	}
	if err != nil {
		c.end(err)
		_ = c.ws.CloseNow()
		return c.closedErr()
	}
	return nil
}

func (c *conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return ErrConnectionClosed
}

// removeScopeLocked forgets a scope that ended, freeing its number.
func (c *conn) removeScopeLocked(s *Scope, reason error) {
	delete(c.scopes, s.id)
	if c.role == roleClient {
		c.scopeNums.give(s.id)
	}
	s.endLocked(reason)
}

// beginClose lets a reader that waits on back-pressure go: the connection
// is being closed.
func (c *conn) beginClose() { c.closingOnce.Do(func() { close(c.closing) }) }

// end ends every scope and channel, without finishes, because the
// connection ended. Streams report an error wrapping ErrConnectionClosed
// and cause; handlers see their contexts end.
func (c *conn) end(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	if cause == nil {
		cause = errors.New("connection ended")
	}
	c.err = fmt.Errorf("%w: %w", ErrConnectionClosed, cause)
	c.beginClose()
	for id, s := range c.scopes {
		if s.answers != nil {
			s.answers.fail(c.err)
		}
		s.endLocked(c.err)
		delete(c.scopes, id)
	}
	c.cancel()
}

// shutdown is the reader's last act: end everything, then let the socket
// go (politely, when the other side broke the rules).
func (c *conn) shutdown(cause error) {
	c.end(cause)
	if errors.Is(cause, errAuthorization) {
		c.log.Info("wire: closing connection", "reason", "authorization frame")
		_ = c.ws.Close(websocket.StatusPolicyViolation, "authorization is not used on this connection")
		return
	}
	c.log.Debug("wire: connection ended", "reason", cause.Error())
	_ = c.ws.CloseNow()
}
