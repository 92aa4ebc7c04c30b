// handler.go defines the unit everything composes around: a Handler answers
// one request with the raw JSON of its result, and a Middleware wraps one
// Handler in another, as http.Handlers wrap.

package mcp

import (
	"context"
	"encoding/json"
)

// A Handler answers one MCP request. It returns the raw JSON of the result,
// or an error: a *jsonrpc.Error is answered as it is; any other error is
// answered as -32603 with a generic message (the detail goes to the log,
// not to the caller).
type Handler interface {
	ServeMCP(ctx context.Context, r *Request) (json.RawMessage, error)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, r *Request) (json.RawMessage, error)

// ServeMCP calls f.
func (f HandlerFunc) ServeMCP(ctx context.Context, r *Request) (json.RawMessage, error) {
	return f(ctx, r)
}

// Middleware wraps a Handler in another.
type Middleware func(next Handler) Handler

// Chain applies middleware so that the first listed is the outermost.
func Chain(h Handler, mw ...Middleware) Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// Result marshals a typed result into the raw form handlers return.
func Result(v any) (json.RawMessage, error) { return json.Marshal(v) }
