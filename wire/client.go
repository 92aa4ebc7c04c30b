// client.go is the multiplexer's client role, the gateway's side: it dials,
// numbers and opens scopes, and reads each scope's and channel's answers as
// a stream. Channels the server opens on the client's scopes are served by
// ClientOptions.Channels.

package wire

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/coder/websocket"
)

// ClientOptions configure a Client. The zero value is usable.
type ClientOptions struct {
	Options
	// Channels serves the channels the server opens on the client's
	// scopes. nil answers each with a bare finish ("received, not served").
	Channels ChannelHandler
	// Dial configures Dial's WebSocket handshake (NewClient ignores it).
	Dial *websocket.DialOptions
}

// Client is the dialling side of one framed connection.
type Client struct {
	c    *conn
	done chan struct{} // closed when the reader goroutine has returned
}

// Dial connects to a framed endpoint (ws://host:14979/) and starts a
// Client on it. ctx bounds the handshake only; Close ends the connection.
func Dial(ctx context.Context, url string, opts *ClientOptions) (*Client, error) {
	var dopts *websocket.DialOptions
	if opts != nil {
		dopts = opts.Dial
	}
	ws, resp, err := websocket.Dial(ctx, url, JoinFrames(dopts))
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("wire: dial %s: HTTP %d: %w", url, resp.StatusCode, err)
		}
		return nil, fmt.Errorf("wire: dial %s: %w", url, err)
	}
	return NewClient(ws, opts), nil
}

// NewClient runs the client role over an established WebSocket, which it
// owns from now on. opts may be nil.
func NewClient(ws *websocket.Conn, opts *ClientOptions) *Client {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	c := newConn(context.Background(), ws, roleClient, &o.Options)
	channels := o.Channels
	if channels == nil {
		channels = HandlerFunc(notServed)
	}
	c.serveChannel = channels.ServeChannel
	cl := &Client{c: c, done: make(chan struct{})}
	go func() {
		defer close(cl.done)
		c.shutdown(c.readLoop())
	}()
	return cl
}

// notServed answers a channel with a bare finish: it returns at once.
func notServed(context.Context, *Responder, []byte) {}

// Open sends a request frame with payload under a scope number not in use
// and returns the scope, whose responses are then read with Next. ctx
// bounds waiting for the write turn.
func (cl *Client) Open(ctx context.Context, payload []byte) (*Scope, error) {
	c := cl.c
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	s := c.newScope(c.scopeNums.take())
	s.answers = newStream()
	c.scopes[s.id] = s
	c.mu.Unlock()

	if err := c.send(ctx, Frame{Type: TypeRequest, Scope: s.id, Payload: payload}, s.liveLocked); err != nil {
		c.mu.Lock()
		if c.scopes[s.id] == s {
			c.removeScopeLocked(s, err)
		}
		c.mu.Unlock()
		return nil, err
	}
	return s, nil
}

// Close ends the connection with a normal closure and waits until the
// reader and every channel handler have returned. Open scopes and
// channels end with ErrConnectionClosed.
func (cl *Client) Close() error {
	cl.c.beginClose()
	err := cl.c.ws.Close(websocket.StatusNormalClosure, "")
	<-cl.done
	cl.c.handlers.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Done is closed when the connection has ended, for whatever reason.
func (cl *Client) Done() <-chan struct{} { return cl.c.ctx.Done() }

// Err returns why the connection ended (wrapping ErrConnectionClosed), or
// nil while it lives.
func (cl *Client) Err() error {
	cl.c.mu.Lock()
	defer cl.c.mu.Unlock()
	return cl.c.err
}

// scopeAnswerLocked routes a response or finish to a scope this client
// opened.
func (c *conn) scopeAnswerLocked(f Frame) string {
	s := c.scopes[f.Scope]
	if s == nil {
		return "response names no open scope"
	}
	if f.Type == TypeResponse {
		s.answers.push(f.Payload)
		return ""
	}
	s.answers.finish()
	c.removeScopeLocked(s, ErrScopeFinished)
	return ""
}
