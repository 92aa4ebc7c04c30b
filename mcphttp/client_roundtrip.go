// client_roundtrip.go lets an mcp.Client take the answer to a request
// straight from the POST that carried it (mcp.RoundTripConn). A relay
// makes one such POST per relayed call, and Write queues its JSON answer
// for the client's read loop: one more goroutine hop per call. Answers on
// an event stream, and every failure, still go through Read as Write
// sends them.

package mcphttp

import (
	"bytes"
	"context"
	"net/http"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

var _ mcp.RoundTripConn = (*StreamableConn)(nil)

// RoundTrip POSTs req, one request the mcp.Client built. A 2xx answer
// that is one JSON document answering it is returned (ok true); anything
// else is handled as Write handles it, and the answer arrives on Read.
func (c *StreamableConn) RoundTrip(ctx context.Context, req *jsonrpc.Message) (*jsonrpc.Message, bool, error) {
	id, method := req.ID, req.Method
	// What Write learns of req; built only when needed (the slice escapes
	// to the stream reader).
	out := func() outgoing { return outgoingOf(req) }
	c.sending(req)
	resp, x, err := c.post(ctx, req, req.Parts())
	if err != nil {
		return nil, false, err
	}
	if resp.StatusCode/100 != 2 || resp.StatusCode == http.StatusAccepted ||
		mediaType(resp.Header.Get("Content-Type")) != "application/json" {
		return nil, false, c.receive(ctx, out(), resp, x)
	}
	defer x.cancel()
	if method == "initialize" {
		c.adoptSession(resp.Header.Get(HeaderSessionID))
	}
	data, err := c.readBody(ctx, resp.Body, resp.ContentLength)
	if err != nil || len(data) > c.opts.MaxMessageBytes {
		return nil, false, c.bodyFailed(ctx, out(), data, err)
	}
	if !jsonrpc.IsBatch(data) {
		m, err := jsonrpc.Parse(data)
		if err == nil && isAnswer(m) && bytes.Equal(m.ID, id) {
			c.arrived(m)
			return m, true, nil
		}
	}
	// Not the plain answer (a batch, another id, not JSON-RPC): what Write
	// does with it.
	c.deliverJSON(out(), data)
	return nil, false, nil
}
