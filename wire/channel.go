// channel.go is a channel this side opened: its number in this side's
// space, and the stream of the answers the other side sends on it.

package wire

import (
	"context"
	"io"
)

// Channel is a channel opened with Scope.OpenChannel or
// Responder.OpenChannel. Its answer is read with Next.
type Channel struct {
	scope   *Scope
	id      uint32
	answers *stream
}

// LimitQueue bounds the bytes that the channel's responses waiting for
// Next may hold, counted as their buffers' capacity: CopyNext's reused
// buffers count in full, which keeps few of them in flight. Beyond the
// bound the connection stops reading until Next has caught up, so the
// peer's writes wait. That is back-pressure, for a byte stream (a pair)
// whose consumer may be slower than the wire. It costs the connection's
// other exchanges their turn meanwhile. 0 (the default) is no bound.
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

// CopyNext writes the channel's next response to w, for a byte stream (a
// pair) whose consumer keeps nothing of it. A long response's buffer then
// goes back to the connection to read a later one into, so that a stream
// of long responses is relayed without an allocation or a second copy
// each. Next's errors come as they are, and w's.
func (ch *Channel) CopyNext(ctx context.Context, w io.Writer) (int, error) {
	ch.answers.lends.Store(true)
	p, err := ch.answers.next(ctx)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(p)
	ch.scope.c.recycle(p)
	return n, err
}
