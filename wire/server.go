// server.go is the multiplexer's server role, the proxy's side: every
// scope and channel the client opens is handed to a Handler in a goroutine
// of its own, and answered through a Responder.

package wire

import (
	"context"

	"github.com/coder/websocket"
)

// ChannelHandler serves channel requests: the client's on the server, the
// server's on the client.
type ChannelHandler interface {
	// ServeChannel answers one channel request. The channel is finished
	// when it returns, if it has not been already (bare when nothing was
	// sent). ctx ends when the channel, its scope, or the connection does.
	// payload is the handler's to keep.
	ServeChannel(ctx context.Context, r *Responder, payload []byte)
}

// Handler serves a server's exchanges.
type Handler interface {
	// ServeScope answers one scope-opening request. The scope is finished when
	// it returns, if it has not been already, and its finish ends its
	// channels. A scope that stays open, such as a begun tools scope, is one
	// whose handler waits, typically on ctx, which ends with the connection.
	ServeScope(ctx context.Context, r *Responder, payload []byte)
	ChannelHandler
}

// HandlerFunc serves scopes and channels with one function; it tells them
// apart with r.IsChannel().
type HandlerFunc func(ctx context.Context, r *Responder, payload []byte)

// ServeScope calls f.
func (f HandlerFunc) ServeScope(ctx context.Context, r *Responder, p []byte) { f(ctx, r, p) }

// ServeChannel calls f.
func (f HandlerFunc) ServeChannel(ctx context.Context, r *Responder, p []byte) { f(ctx, r, p) }

// Serve runs the server role over an accepted WebSocket until the
// connection ends, then waits for every handler to return. Cancelling ctx
// closes the connection (going away). A type-0 (authorization) frame
// closes it too: this wire has no authorization. Serve returns nil after
// a normal close, ctx's error after its cancellation, else why the
// connection ended (ErrPeerGone, wrapped, for a peer that answered no
// ping). opts may be nil.
func Serve(ctx context.Context, ws *websocket.Conn, h Handler, opts *Options) error {
	c := newConn(ctx, ws, roleServer, opts)
	c.serveScope, c.serveChannel = h.ServeScope, h.ServeChannel
	stopped := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(stopped)
		c.beginClose()
		_ = ws.Close(websocket.StatusGoingAway, "server stopping")
	})
	err := c.readLoop()
	c.mu.Lock()
	if c.gone != nil {
		err = c.gone // the reader only saw the socket the keepalive closed
	}
	c.mu.Unlock()
	c.shutdown(err)
	if !stop() {
		<-stopped
	}
	c.handlers.Wait()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case websocket.CloseStatus(err) == websocket.StatusNormalClosure,
		websocket.CloseStatus(err) == websocket.StatusGoingAway:
		return nil
	}
	return err
}

// openPeerScopeLocked starts serving a scope the client opened.
func (c *conn) openPeerScopeLocked(f Frame) string {
	if c.scopes[f.Scope] != nil {
		return "request names a scope still open"
	}
	s := c.newScope(f.Scope)
	c.scopes[f.Scope] = s
	r := &Responder{c: c, scope: s, ctx: s.ctx}
	c.serveLocked(r, f.Payload, c.serveScope)
	return ""
}
