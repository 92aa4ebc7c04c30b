// route.go is the reader goroutine: it reads each message, parses it as a
// frame and hands it to its exchange. Frames that name nothing open, or
// travel the wrong way, are disregarded — logged at debug, never answered
// — and the connection stays up, as the spec asks.

package wire

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/coder/websocket"
)

// readLoop reads and routes frames until the connection ends, and returns
// why it ended.
func (c *conn) readLoop() error {
	for {
		typ, msg, oversized, err := c.read()
		if err != nil {
			return err
		}
		if typ != websocket.MessageBinary {
			c.log.Debug("wire: message disregarded", "reason", "not binary", "len", len(msg))
			continue
		}
		f, err := ParseFrame(msg)
		if err != nil {
			c.log.Debug("wire: message disregarded", "reason", err.Error(), "len", len(msg))
			continue
		}
		if oversized {
			c.tooLarge(f)
			continue
		}
		reason, stop := c.route(f)
		if stop != nil {
			return stop
		}
		c.mu.Lock()
		st := c.pressure
		c.pressure = nil
		c.mu.Unlock()
		if st != nil {
			c.stalled.Store(true)
			st.waitDrained(c.closing) // back-pressure: read nothing more meanwhile
			c.stalled.Store(false)
			c.lastRead.Store(time.Now().UnixNano())
		}
		if reason != "" {
			c.log.Debug("wire: frame disregarded", "reason", reason,
				"type", f.Type.String(), "scope", f.Scope, "channel", f.Channel)
		}
	}
}

// read returns the next message in a buffer of its own: payloads are handed
// to exchanges that may keep them. A message over the read limit is read
// to its end and dropped: msg is then its frame header alone (what was
// read of it, at most HeaderSize bytes) and oversized is true.
func (c *conn) read() (typ websocket.MessageType, msg []byte, oversized bool, err error) {
	typ, r, err := c.ws.Reader(context.Background())
	if err != nil {
		return 0, nil, false, err
	}
	c.lastRead.Store(time.Now().UnixNano())
	c.rbuf.Reset()
	if c.limit < 0 {
		_, err = c.rbuf.ReadFrom(r)
	} else {
		c.rlim = io.LimitedReader{R: r, N: c.limit + 1}
		_, err = c.rbuf.ReadFrom(&c.rlim)
		c.rlim.R = nil
		if err == nil && int64(c.rbuf.Len()) > c.limit {
			oversized = true
			_, err = io.Copy(io.Discard, r)
			c.rbuf.Truncate(min(c.rbuf.Len(), HeaderSize))
		}
	}
	if err != nil {
		return 0, nil, false, err
	}
	msg = bytes.Clone(c.rbuf.Bytes())
	if c.rbuf.Cap() > keepBuffer {
		c.rbuf = bytes.Buffer{}
	}
	return typ, msg, oversized, nil
}

// tooLarge answers a frame whose payload was over the read limit: the
// exchange this side opened that it answers ends with a *TooLargeError
// (its finish, which follows, is then taken as usual); any other frame is
// disregarded.
func (c *conn) tooLarge(f Frame) {
	c.log.Warn("wire: message over the read limit dropped", "limit", c.limit,
		"type", f.Type.String(), "scope", f.Scope, "channel", f.Channel)
	err := &TooLargeError{Limit: c.limit}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.scopes[f.Scope]
	if s == nil {
		return
	}
	switch {
	case f.Type == TypeChannelResponse:
		if ch := s.own[f.Channel]; ch != nil {
			ch.answers.fail(err)
		}
	case f.Type == TypeResponse && c.role == roleClient && s.answers != nil:
		s.answers.fail(err)
	}
}

// route hands a frame to its exchange. It returns why the frame was
// disregarded ("" if it was not), or an error that ends the connection.
func (c *conn) route(f Frame) (disregarded string, stop error) {
	if c.role == roleClient && !f.Type.SentByServer() || c.role == roleServer && !f.Type.SentByClient() {
		return "type not sent in this direction", nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return "connection ended", nil
	}
	switch f.Type {
	case TypeAuthorization:
		if c.role == roleServer {
			return "", errAuthorization
		}
		return "authorization is not used on this connection", nil
	case TypeRequest:
		return c.openPeerScopeLocked(f), nil
	case TypeResponse, TypeResponseFinish:
		return c.scopeAnswerLocked(f), nil
	case TypeChannelRequest:
		return c.openPeerChannelLocked(f), nil
	default: // TypeChannelResponse, TypeChannelResponseFinish
		return c.channelAnswerLocked(f), nil
	}
}

// openPeerChannelLocked starts serving a channel the other side opened.
func (c *conn) openPeerChannelLocked(f Frame) string {
	s := c.scopes[f.Scope]
	if s == nil {
		return "channel request names no open scope"
	}
	if s.peer[f.Channel] != nil {
		return "channel request names a channel still open"
	}
	ctx, cancel := context.WithCancel(s.ctx)
	r := &Responder{c: c, scope: s, channel: f.Channel, isChannel: true, ctx: ctx, cancel: cancel}
	if s.peer == nil {
		s.peer = make(map[uint32]*Responder)
	}
	s.peer[f.Channel] = r
	c.serveLocked(r, f.Payload, c.serveChannel)
	return ""
}

// channelAnswerLocked routes a response or finish to a channel this side
// opened.
func (c *conn) channelAnswerLocked(f Frame) string {
	s := c.scopes[f.Scope]
	if s == nil {
		return "channel response names no open scope"
	}
	ch := s.own[f.Channel]
	if ch == nil {
		return "channel response names no open channel"
	}
	if f.Type == TypeChannelResponse {
		if ch.answers.push(f.Payload) {
			c.pressure = ch.answers // readLoop waits for it, outside the lock
		}
		return ""
	}
	delete(s.own, f.Channel)
	s.nums.give(f.Channel)
	ch.answers.finish()
	return ""
}

// serveLocked runs a handler in a goroutine of its own, so that a slow
// exchange never delays another.
func (c *conn) serveLocked(r *Responder, payload []byte, h func(context.Context, *Responder, []byte)) {
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		defer r.done()
		h(r.ctx, r, payload)
	}()
}
