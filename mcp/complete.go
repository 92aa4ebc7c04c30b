// complete.go serves completion/complete behind the same visibility as the
// lists: a caller who may not see a prompt or a resource template learns
// nothing about its arguments' values either.

package mcp

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// gatedComplete wraps the configured completion handler. A ref naming an
// entry the caller may not see is answered as if it did not exist; a ref
// the registries do not know is left to the handler.
func (s *Server) gatedComplete(complete Handler) Handler {
	return HandlerFunc(func(ctx context.Context, r *Request) (json.RawMessage, error) {
		if entry, ok := s.completionEntry(r.Params); ok && !s.gate.Visible(ctx, entry) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: unknown ref", nil)
		}
		return complete.ServeMCP(ctx, r)
	})
}

// completionEntry finds the registry entry a completion ref names.
func (s *Server) completionEntry(params json.RawMessage) (Entry, bool) {
	if len(params) == 0 || params[0] != '{' {
		return Entry{}, false
	}
	ref, _ := jsonrpc.Lookup(params, "ref")
	if len(ref) == 0 || ref[0] != '{' {
		return Entry{}, false
	}
	switch typ, _ := jsonrpc.LookupString(ref, "type"); typ {
	case "ref/prompt":
		name, _ := jsonrpc.LookupString(ref, "name")
		_, e, ok := s.prompts.get(name)
		return e, ok
	case "ref/resource":
		uri, _ := jsonrpc.LookupString(ref, "uri")
		if _, e, ok := s.templates.get(uri); ok {
			return e, true
		}
		_, e, ok := s.resources.get(uri)
		return e, ok
	}
	return Entry{}, false
}
