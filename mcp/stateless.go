// stateless.go serves the 2025 era's stateless mode (Streamable HTTP
// without sessions) on the engine's sessionless path, as 2026-07-28 is
// served: one request on its own, with no Session behind it. What a session
// would hold comes from the transport instead: the revision (its
// MCP-Protocol-Version header), no client capabilities (no initialize was
// kept), every log message sent. Unlike 2026-07-28, the server may still
// ask the client during a call (sampling, elicitation, roots). The request
// goes out on the call's stream. The client's answer comes in a POST of its
// own, which DeliverStateless hands to the call waiting for it, the same
// caller's only.

package mcp

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// statelessCalls are the server's requests to stateless clients waiting
// for an answer, by the request's id.
type statelessCalls struct {
	mu sync.Mutex
	m  map[string]statelessCall
}

type statelessCall struct {
	principal string
	answer    chan *jsonrpc.Message
}

// ServeStateless serves one message of a stateless 2025-era client under
// revision version, with related messages (progress, log messages, the
// server's own requests) on sink, and returns the answer to write (nil for
// a notification or an answer). The identity in ctx is the caller.
func (s *Server) ServeStateless(ctx context.Context, m *jsonrpc.Message, version string, sink Sink) []byte {
	switch m.Kind() {
	case jsonrpc.KindResult, jsonrpc.KindError:
		s.deliverStateless(ctx, m)
		return nil
	case jsonrpc.KindNotification:
		return nil // nothing of the POST outlives it for a notification to act on
	}
	if _, ok := IdentityFrom(ctx); !ok {
		ctx = WithIdentity(ctx, Identity{})
	}
	if sink == nil {
		sink = discardSink{}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rm := requestMeta{server: s, version: version, stateless: true}
	r := &Request{ID: m.ID, Method: m.Method, Params: m.Params, sink: sink, abort: cancel, meta: &rm, metaRaw: paramsMeta(m.Params)}
	result, err := s.serve(ctx, r)
	if err != nil {
		return jsonrpc.AppendError(nil, m.ID, s.errorFor(r, err))
	}
	return jsonrpc.AppendResult(nil, m.ID, result)
}

// Call serves one request in process, as ServeStateless does (the caller
// is ctx's identity; the gate, the rate limit and the observers apply),
// and returns its result or its error (a *jsonrpc.Error).
func (s *Server) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	out := s.ServeStateless(ctx, &jsonrpc.Message{ID: jsonrpc.ID("1"), Method: method, Params: params}, Version20251125, nil)
	m, err := jsonrpc.Parse(out)
	switch {
	case err != nil:
		return nil, err
	case m.Error != nil:
		return nil, jsonrpc.RawError(m.Error)
	}
	return m.Result, nil
}

// ServeStatelessBatch is ServeStateless for a batch (2025-03-26): its
// requests are served at once, and the answers are returned in order as
// one batch (nil when none is due).
func (s *Server) ServeStatelessBatch(ctx context.Context, msgs []*jsonrpc.Message, errs []error, version string, sink Sink) []byte {
	return serveBatch(msgs, errs, func(m *jsonrpc.Message) []byte { return s.ServeStateless(ctx, m, version, sink) })
}

// statelessCall sends the server's request to a stateless client on sink
// and waits for the answer its next POST brings.
func (s *Server) statelessCall(ctx context.Context, sink Sink, method string, params json.RawMessage) (json.RawMessage, error) {
	id := s.newCallID()
	ch := make(chan *jsonrpc.Message, 1)
	s.statelessCalls.mu.Lock()
	if s.statelessCalls.m == nil {
		s.statelessCalls.m = map[string]statelessCall{}
	}
	s.statelessCalls.m[id.Key()] = statelessCall{principal: principalOf(ctx), answer: ch}
	s.statelessCalls.mu.Unlock()
	defer func() {
		s.statelessCalls.mu.Lock()
		delete(s.statelessCalls.m, id.Key())
		s.statelessCalls.mu.Unlock()
	}()
	if err := sink.Send(ctx, jsonrpc.AppendRequest(nil, id, method, params)); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, jsonrpc.RawError(m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		_ = sink.Send(context.WithoutCancel(ctx), jsonrpc.AppendRequest(nil, nil, "notifications/cancelled",
			json.RawMessage(`{"requestId":`+string(id)+`,"reason":"request cancelled"}`)))
		return nil, ctx.Err()
	}
}

// deliverStateless hands a client's answer to the server's request
// waiting for it, when the same caller sent both.
func (s *Server) deliverStateless(ctx context.Context, m *jsonrpc.Message) {
	s.statelessCalls.mu.Lock()
	c, ok := s.statelessCalls.m[m.ID.Key()]
	s.statelessCalls.mu.Unlock()
	if !ok || c.principal != principalOf(ctx) {
		s.log.Debug("mcp: answer to no pending stateless request", "id", string(m.ID))
		return
	}
	select {
	case c.answer <- m.Clone():
	default: // a duplicate answer; the first one won
	}
}

// Stateless reports whether r is a stateless 2025-era client's request
// (ServeStateless): its client's capabilities are unknown, and it is asked
// for what a handler needs.
func (r *Request) Stateless() bool { return r.meta != nil && r.meta.stateless }
