// conn_asked.go serves the channels the proxy opens during an exchange:
// the server's own requests (sampling, elicitation, roots), relayed to
// the client and answered back.

package wiremcp

import (
	"context"
	"strconv"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/wire"
)

// serveProxyChannel serves a channel the proxy opened. A server request
// (tag 12) goes to the client as a request from the server, under an id of
// this connection's own. Its answer goes back on the channel. The Postgres
// and Daemon pairs are not served yet (bare finish).
func (c *Conn) serveProxyChannel(ctx context.Context, r *wire.Responder, p []byte) {
	req, err := wire.DecodeProxyChannelRequest(p)
	if err != nil {
		c.log.Info("wiremcp: a channel the proxy opened does not decode; bare finish", "err", err)
		return
	}
	var sr wire.McpServerRequest
	switch req := req.(type) {
	case wire.ProxyPostgres:
		c.pairPostgres(ctx, r, req.ConnID)
		return
	case wire.ProxyDaemon:
		c.pairDaemon(ctx, r, req.ConnID)
		return
	case wire.McpServerRequest:
		sr = req
	}
	m, err := jsonrpc.Parse(sr.Request)
	if err != nil {
		return // DecodeProxyChannelRequest parsed it
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.askedID++
	id := jsonrpc.ID(strconv.AppendQuote([]byte(nil), "wire-"+strconv.FormatUint(c.askedID, 10)))
	answer := make(chan *jsonrpc.Message, 1)
	c.asked[string(id)] = answer
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.asked, string(id))
		c.mu.Unlock()
	}()
	// After the notifications that reached us before it, as an answer.
	c.deliverAnswer(&jsonrpc.Message{ID: id, Method: m.Method, Params: m.Params})
	select {
	case a := <-answer:
		resp := wire.Response{Result: a.Result}
		if a.Error != nil {
			resp = wire.Response{Error: jsonrpc.RawError(a.Error)}
		}
		if err := r.Respond(resp.Append(nil)); err != nil {
			c.log.Debug("wiremcp: the answer to a server request was not sent", "method", m.Method, "err", err)
		}
	case <-ctx.Done(): // the connection ended: nothing to answer on
	case <-c.ctx.Done():
	}
}

// answered hands the client's answer to a server request to the channel
// waiting for it; an answer to nothing asked is dropped.
func (c *Conn) answered(m *jsonrpc.Message) {
	c.mu.Lock()
	ch := c.asked[string(m.ID)]
	c.mu.Unlock()
	if ch == nil {
		c.log.Debug("wiremcp: an answer to no server request dropped", "id", string(m.ID))
		return
	}
	select {
	case ch <- m.Clone(): // m is the caller's again once Write returns
	default:
	}
}
