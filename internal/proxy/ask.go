// ask.go relays what the MCP server asks of its client while it serves an
// exchange (sampling/createMessage, elicitation/create, roots/list) to the
// gateway. It opens a channel on the begun tools scope (tag 12,
// McpServerRequest; docs/wire.md 3.6). It hands the gateway's answer back
// to the server byte for byte.
//
// Only the framed form can carry it: the per-path form has no channel
// from the proxy. With no begun framed connection, or when the gateway
// answers with a bare finish, the server hears -32601, as from a client
// that does not serve the method. The upstream transports do not say
// which exchange a request came with, so the related channel is 0 and the
// gateway routes it as it would a request from a shared session.

package proxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/wire"
)

// answerBegin sends the Begun on r, the begun tools scope of the framed
// connection, and makes r where the server's requests go until the
// connection ends. Both happen under askerMu, so a request the server
// makes while serving the gateway's first exchange — which the gateway
// sends as soon as it reads the Begun — finds r, never the moment
// between the two.
func (s *Server) answerBegin(ctx context.Context, r *wire.Responder, begun []byte) error {
	s.askerMu.Lock()
	defer s.askerMu.Unlock()
	if err := r.Respond(begun); err != nil {
		return err
	}
	s.asker.Store(r)
	context.AfterFunc(ctx, func() { s.asker.CompareAndSwap(r, nil) })
	return nil
}

// currentAsker is the begun tools scope the server's requests and the
// program's connections go to, nil while no framed connection has begun.
func (s *Server) currentAsker() *wire.Responder {
	s.askerMu.Lock()
	defer s.askerMu.Unlock()
	return s.asker.Load()
}

// ask relays one server request to the gateway and returns its answer.
func (s *Server) ask(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
	r := s.currentAsker()
	if r == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "%s: no gateway is connected to answer it", m.Method)
	}
	req := wire.McpServerRequest{Request: jsonrpc.AppendRequest(nil, m.ID, m.Method, m.Params)}
	ch, err := r.OpenChannel(ctx, req.Append(nil))
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s: the gateway's connection ended", m.Method)
	}
	p, err := ch.Next(ctx)
	switch {
	case errors.Is(err, wire.ErrBareFinish):
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "%s: not served by the gateway", m.Method)
	case err != nil:
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s: the gateway's connection ended before it answered", m.Method)
	}
	resp, err := wire.DecodeResponse(p)
	switch {
	case err != nil:
		s.log.Warn("proxy: unreadable answer from the gateway to a server request", "method", m.Method, "err", err)
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s: unreadable answer from the gateway", m.Method)
	case resp.Error != nil:
		return nil, resp.Error
	}
	return resp.Result, nil
}
