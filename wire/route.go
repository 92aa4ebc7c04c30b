// route.go is the reader goroutine: it reads each message, parses it as a
// frame and hands it to its exchange. Frames that name nothing open, or
// travel the wrong way, are disregarded — logged at debug, never answered
// — and the connection stays up, as the spec asks.

package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"time"

	"github.com/coder/websocket"
)

// readLoop reads and routes frames until the connection ends, and returns
// why it ended.
func (c *conn) readLoop() error {
	for {
		typ, head, body, oversized, err := c.read()
		if err != nil {
			return err
		}
		if typ != websocket.MessageBinary {
			c.log.Debug("wire: message disregarded", "reason", "not binary", "len", len(head)+len(body))
			continue
		}
		f, err := ParseFrame(head)
		if err != nil {
			c.log.Debug("wire: message disregarded", "reason", err.Error(), "len", len(head))
			continue
		}
		if body != nil {
			f.Payload = body
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

// readInPlace is the longest message read into the connection's first
// buffer and copied out whole.
const readInPlace = 16 << 10

// freePayloads is how many buffers of responses CopyNext wrote out a
// connection keeps for the next ones.
const freePayloads = 8

// read returns the next message in buffers of its own: payloads are handed
// to exchanges that may keep them. Most messages come whole in head (body
// nil). A longer one than readInPlace on a channel whose consumer copies
// each response out (Channel.CopyNext) has its frame header in head, valid
// until the next read, and its payload in body, a buffer CopyNext gives
// back. A message
// over the read limit is read to its end and dropped: head is then its
// frame header alone (what was read of it, at most HeaderSize bytes) and
// oversized is true.
func (c *conn) read() (typ websocket.MessageType, head, body []byte, oversized bool, err error) {
	typ, r, err := c.ws.Reader(context.Background())
	if err != nil {
		return 0, nil, nil, false, err
	}
	c.lastRead.Store(time.Now().UnixNano())
	limit := c.limit
	if limit < 0 {
		limit = math.MaxInt64 - 1
	}
	n, err := io.ReadFull(r, c.first[:])
	whole := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	switch {
	case err != nil && !whole:
		return 0, nil, nil, false, err
	case int64(n) > limit && whole:
		return typ, bytes.Clone(c.first[:min(n, HeaderSize)]), nil, true, nil
	case int64(n) > limit:
		return c.dropRest(typ, r)
	case whole:
		return typ, bytes.Clone(c.first[:n]), nil, false, nil
	case c.lends(c.first[:HeaderSize]):
		return c.readLent(typ, r, n, limit)
	}
	c.rbuf.Reset()
	c.rbuf.Write(c.first[:])
	c.rlim = io.LimitedReader{R: r, N: limit + 1 - int64(n)}
	_, err = c.rbuf.ReadFrom(&c.rlim)
	c.rlim.R = nil
	if err != nil {
		return 0, nil, nil, false, err
	}
	if int64(c.rbuf.Len()) > limit {
		return c.dropRest(typ, r)
	}
	head = bytes.Clone(c.rbuf.Bytes())
	if c.rbuf.Cap() > keepBuffer {
		c.rbuf = bytes.Buffer{}
	}
	return typ, head, nil, false, nil
}

// readLent reads the rest of a long message for a channel read with
// CopyNext, whose first n bytes are read: its payload goes into a buffer
// CopyNext gave back, or a new one as long as the longest before.
func (c *conn) readLent(typ websocket.MessageType, r io.Reader, n int, limit int64) (websocket.MessageType, []byte, []byte, bool, error) {
	var body []byte
	select {
	case body = <-c.free:
	default:
	}
	if body == nil || cap(body) < c.lentMax { // none, or one too short to be worth growing
		body = make([]byte, 0, max(c.lentMax, 2*n))
	}
	body = append(body, c.first[HeaderSize:n]...)
	for whole := false; !whole; {
		var k int
		var err error
		if len(body) < cap(body) {
			k, err = r.Read(body[len(body):cap(body)])
			body = body[:len(body)+k]
		} else { // full: most often the message has ended, which only a read tells
			k, err = r.Read(c.spare[:])
			if k > 0 {
				body = append(slices.Grow(body, len(body)), c.spare[:k]...)
			}
		}
		if int64(HeaderSize+len(body)) > limit {
			c.recycle(body)
			return c.dropRest(typ, r)
		}
		whole = errors.Is(err, io.EOF)
		if err != nil && !whole {
			c.recycle(body)
			return 0, nil, nil, false, err
		}
	}
	c.lentMax = max(c.lentMax, len(body))
	return typ, c.first[:HeaderSize], body, false, nil
}

// recycle keeps a payload buffer CopyNext is done with, for readLent; a
// short response's is not worth it.
func (c *conn) recycle(p []byte) {
	if cap(p) <= readInPlace {
		return
	}
	select {
	case c.free <- p[:0]:
	default:
	}
}

// dropRest reads the rest of an oversized message and returns the frame
// header from its first bytes.
func (c *conn) dropRest(typ websocket.MessageType, r io.Reader) (websocket.MessageType, []byte, []byte, bool, error) {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return 0, nil, nil, false, err
	}
	return typ, bytes.Clone(c.first[:HeaderSize]), nil, true, nil
}

// lends reports whether the frame header h is a response on a channel
// this side opened whose consumer reads with CopyNext.
func (c *conn) lends(h []byte) bool {
	f, err := ParseFrame(h)
	if err != nil || f.Type != TypeChannelResponse {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.scopes[f.Scope]
	if s == nil {
		return false
	}
	ch := s.own[f.Channel]
	return ch != nil && ch.answers.lends.Load()
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
