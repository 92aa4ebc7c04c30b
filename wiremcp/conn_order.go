// conn_order.go delivers what the proxy sends in the order it sent it: a
// notification that came before an answer reaches the client first.

package wiremcp

import (
	"context"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/wire"
)

// readNotifications delivers each notification of the stream as a message
// from Read, and the answers handed to it after the notifications that
// arrived before them. It pops a notification only to deliver it at once:
// were an exchange to deliver its own answer, a notification popped just
// before the answer's drain and not yet delivered would follow the answer.
func (c *Conn) readNotifications() {
	defer c.wg.Done()
	for {
		p, err := c.notes.Next(c.waitContext())
		// A kick's cancellation is context.Canceled itself; a stream's end
		// wraps its cause.
		stop := err != nil && (err != context.Canceled || c.ctx.Err() != nil)
		c.order.Lock()
		if err == nil {
			c.deliverNote(p)
		}
		if len(c.answers) > 0 || stop {
			c.drainNotesLocked()
			for _, a := range c.answers {
				c.in.push(a)
			}
			c.answers = nil
		}
		c.readerGone = stop
		c.order.Unlock()
		if stop {
			return // the connection ended: watch reports it
		}
	}
}

// waitContext is the context of readNotifications' next wait: already
// done after a kick, so that the answers handed over are not left waiting
// for the next notification.
func (c *Conn) waitContext() context.Context {
	c.kickMu.Lock()
	defer c.kickMu.Unlock()
	if c.kicked {
		c.kicked = false
		if c.kickCtx != nil && c.kickCtx.Err() != nil {
			c.kickCtx, c.kickCancel = nil, nil
		}
		return doneContext
	}
	if c.kickCtx == nil {
		c.kickCtx, c.kickCancel = context.WithCancel(c.ctx)
	}
	return c.kickCtx
}

func (c *Conn) kick() {
	c.kickMu.Lock()
	defer c.kickMu.Unlock()
	c.kicked = true
	if c.kickCancel != nil {
		c.kickCancel()
	}
}

// deliverAnswer puts an exchange's answer in the inbox after the
// notifications received before it. The proxy writes a call's answer after
// the notifications its server sent before it (proxy/order.go); the wire
// keeps the frames' order, and this keeps our side from reordering them.
func (c *Conn) deliverAnswer(msg *jsonrpc.Message) {
	c.order.Lock()
	if c.readerGone {
		c.drainNotesLocked()
		c.in.push(msg)
		c.order.Unlock()
		return
	}
	c.answers = append(c.answers, msg)
	c.order.Unlock()
	c.kick()
}

// drainNotesLocked delivers the notifications that have arrived, without
// waiting for more.
func (c *Conn) drainNotesLocked() {
	for {
		p, err := c.notes.Next(doneContext) // only what has arrived
		if err != nil {
			return
		}
		c.deliverNote(p)
	}
}

// doneContext is already cancelled: a Next with it returns only what is
// queued.
var doneContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (c *Conn) deliverNote(p []byte) {
	resp, err := wire.DecodeResponse(p)
	switch {
	case err != nil:
		c.log.Warn("wiremcp: unreadable notification from the proxy", "err", err)
	case resp.Error != nil:
		c.log.Warn("wiremcp: the proxy cannot reach its MCP server for notifications", "code", resp.Error.Code)
	default:
		m, err := jsonrpc.Parse(resp.Result)
		if err != nil || m.Kind() != jsonrpc.KindNotification {
			c.log.Warn("wiremcp: a notification from the proxy that is not one", "err", err)
			return
		}
		c.in.push(m)
	}
}
