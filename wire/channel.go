// channel.go is a channel this side opened: its number in this side's
// space, and the stream of the answers the other side sends on it.

package wire

import "context"

// Channel is a channel opened with Scope.OpenChannel or
// Responder.OpenChannel. Its answer is read with Next.
type Channel struct {
	scope   *Scope
	id      uint32
	answers *stream
}

// LimitQueue bounds the bytes of the channel's responses that may wait for
// Next. Beyond the bound the connection stops reading until Next has caught
// up, so the peer's writes wait. That is back-pressure, for a byte stream
// (a pair) whose consumer may be slower than the wire. It costs the
// connection's other exchanges their turn meanwhile. 0 (the default) is no
// bound.
func (ch *Channel) LimitQueue(bytes int) { ch.answers.setLimit(bytes) }

// ID returns the channel's number, in the space of the side that opened
// it.
func (ch *Channel) ID() uint32 { return ch.id }

// Scope returns the number of the scope the channel is in.
func (ch *Channel) Scope() uint32 { return ch.scope.id }

// Next returns the channel's next response. At the channel's finish it
// returns io.EOF, or ErrBareFinish when nothing came before the finish
// ("received, not served"); if the scope ends first, ErrScopeFinished; if
// the connection ends, an error wrapping ErrConnectionClosed. ctx bounds
// only this wait.
func (ch *Channel) Next(ctx context.Context) ([]byte, error) { return ch.answers.next(ctx) }
