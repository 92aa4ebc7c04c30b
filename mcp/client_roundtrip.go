// client_roundtrip.go is the short way for a request whose transport reads
// the answer in the same exchange that sent it: a Streamable HTTP POST
// answered with one JSON document. The answer goes straight back to the
// waiting call, without the queue the read loop drains and its goroutine
// hop. Everything else — answers on an event stream, notifications, the
// server's own requests — still arrives through Read.

package mcp

import (
	"context"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A RoundTripConn is a Conn that can send one request and, when the
// answer comes back in the same exchange, return it at once. A Client
// uses RoundTrip instead of Write for each of its requests when its Conn
// has it.
type RoundTripConn interface {
	Conn
	// RoundTrip sends m, one request. If the answer to it came back with
	// it, RoundTrip returns it (ok true; the message is the caller's) and
	// it will not also arrive on Read. Otherwise (ok false) it behaves as
	// Write: the answer, the server's or a failure made up by the
	// transport, arrives on Read. err is what Write would return.
	RoundTrip(ctx context.Context, m *jsonrpc.Message) (answer *jsonrpc.Message, ok bool, err error)
}

// send sends the request req; answer is non-nil when the Conn returned it
// at once, and then the read loop never sees it.
func (c *Client) send(ctx context.Context, req *jsonrpc.Message) (answer *jsonrpc.Message, err error) {
	if c.rt == nil {
		return nil, c.conn.Write(ctx, req)
	}
	m, ok, err := c.rt.RoundTrip(ctx, req)
	if err != nil || !ok {
		return nil, err
	}
	return m, nil
}
