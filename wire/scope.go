// scope.go is one open scope, as either side keeps it: the channels each
// side opened in it and, on the client, the stream of the scope's own
// responses. A scope's end — its finish, or the connection's — ends every
// channel in it.

package wire

import "context"

// Scope is a scope the client opened with Client.Open. Its responses are
// read with Next; channels are opened in it with OpenChannel.
type Scope struct {
	c       *conn
	id      uint32
	ctx     context.Context // parent of the contexts of channels served in it
	cancel  context.CancelFunc
	answers *stream // the scope's responses; client role only

	// Guarded by c.mu.
	ended error                 // why the scope is over; nil while open
	own   map[uint32]*Channel   // channels this side opened, by number
	peer  map[uint32]*Responder // channels the other side opened, being served
	nums  numbers               // this side's channel numbers
}

func (c *conn) newScope(id uint32) *Scope {
	ctx, cancel := context.WithCancel(c.ctx)
	return &Scope{c: c, id: id, ctx: ctx, cancel: cancel}
}

// ID returns the scope's number.
func (s *Scope) ID() uint32 { return s.id }

// Next returns the scope's next response. At the scope's finish it
// returns io.EOF, or ErrBareFinish when no response came before the
// finish; if the connection ends first, an error wrapping
// ErrConnectionClosed. ctx bounds only this wait: nobody cancels an
// exchange on this wire.
func (s *Scope) Next(ctx context.Context) ([]byte, error) { return s.answers.next(ctx) }

// OpenChannel sends a channel request with payload on the scope, under a
// number of this side's that is not in use, and returns the channel whose
// answer is then read with Next. ctx bounds waiting for the connection's
// write turn.
func (s *Scope) OpenChannel(ctx context.Context, payload []byte) (*Channel, error) {
	c := s.c
	c.mu.Lock()
	if s.ended != nil {
		c.mu.Unlock()
		return nil, s.ended
	}
	ch := &Channel{scope: s, id: s.nums.take(), answers: newStream()}
	if s.own == nil {
		s.own = make(map[uint32]*Channel)
	}
	s.own[ch.id] = ch
	c.mu.Unlock()

	f := Frame{Type: TypeChannelRequest, Scope: s.id, Channel: ch.id, Payload: payload}
	if err := c.send(ctx, f, s.liveLocked); err != nil {
		c.mu.Lock()
		if s.own[ch.id] == ch {
			delete(s.own, ch.id)
			s.nums.give(ch.id)
		}
		c.mu.Unlock()
		return nil, err
	}
	return ch, nil
}

// liveLocked reports why the scope is over, or nil. c.mu is held.
func (s *Scope) liveLocked() error { return s.ended }

// endLocked ends the scope and everything in it: the channels this side
// opened see reason, the channels being served see their context end.
// c.mu is held.
func (s *Scope) endLocked(reason error) {
	s.ended = reason
	for _, ch := range s.own {
		ch.answers.fail(reason)
	}
	s.own, s.peer = nil, nil
	s.cancel()
}
