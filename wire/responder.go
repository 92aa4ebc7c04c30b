// responder.go is the answering side of one exchange — a scope the client
// opened, served by the server, or a channel the other side opened. Only
// the answering side finishes, so the Responder is where finishes come
// from; a handler that returns without finishing finishes on return.

package wire

import (
	"context"
	"sync"
)

// Responder answers one scope or channel request. Its methods may be
// called from any goroutine.
type Responder struct {
	c         *conn
	scope     *Scope
	channel   uint32
	isChannel bool
	ctx       context.Context
	cancel    context.CancelFunc // a channel's own; a scope's is the Scope's

	mu       sync.Mutex
	finished bool
}

// Scope returns the number of the scope the exchange is (or is in).
func (r *Responder) Scope() uint32 { return r.scope.id }

// IsChannel reports whether the exchange is a channel rather than a scope.
func (r *Responder) IsChannel() bool { return r.isChannel }

// Context ends when the exchange does: its finish, its scope's, or the
// connection's end.
func (r *Responder) Context() context.Context { return r.ctx }

// Channel returns the channel's number in the other side's space (0 for a
// scope).
func (r *Responder) Channel() uint32 { return r.channel }

// Respond sends one response: a response frame for a scope, a channel
// response for a channel. It fails with ErrFinished after the finish,
// ErrScopeFinished once the scope is over, or an error wrapping
// ErrConnectionClosed.
func (r *Responder) Respond(payload []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return ErrFinished
	}
	t := TypeResponse
	if r.isChannel {
		t = TypeChannelResponse
	}
	f := Frame{Type: t, Scope: r.scope.id, Channel: r.channel, Payload: payload}
	return r.c.send(context.Background(), f, r.liveLocked)
}

// Finish ends the exchange; with no Respond before it, it is a bare
// finish, "received, not served". Finishing a scope ends every channel
// still open in it. The number is free for the other side once the finish
// is written, so the exchange is removed before it is.
func (r *Responder) Finish() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return ErrFinished
	}
	r.finished = true
	if r.cancel != nil {
		defer r.cancel()
	}
	t := TypeResponseFinish
	if r.isChannel {
		t = TypeChannelResponseFinish
	}
	f := Frame{Type: t, Scope: r.scope.id, Channel: r.channel}
	return r.c.send(context.Background(), f, func() error {
		if err := r.liveLocked(); err != nil {
			return err
		}
		if r.isChannel {
			delete(r.scope.peer, r.channel)
		} else {
			r.c.removeScopeLocked(r.scope, ErrScopeFinished)
		}
		return nil
	})
}

// OpenChannel opens a channel from this side in the exchange's scope (see
// Scope.OpenChannel). The numbers are this side's own, separate from the
// channels the other side opens.
func (r *Responder) OpenChannel(ctx context.Context, payload []byte) (*Channel, error) {
	return r.scope.OpenChannel(ctx, payload)
}

func (r *Responder) liveLocked() error { return r.scope.liveLocked() }

// done is the handler's return: finish what it left open.
func (r *Responder) done() {
	r.mu.Lock()
	finished := r.finished
	r.mu.Unlock()
	if !finished {
		_ = r.Finish()
	}
	if r.cancel != nil {
		r.cancel()
	}
}
