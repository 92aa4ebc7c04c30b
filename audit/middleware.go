// middleware.go turns each gated call into one audit record. It wraps the
// whole method chain, outside the gate, so that refusals are recorded as
// well as calls that ran; every other method passes through unrecorded.

package audit

import (
	"context"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/store"
)

// maxNameBytes bounds the name recorded: it comes from the caller, and an
// unknown tool's name can be anything the caller sent.
const maxNameBytes = 512

// MiddlewareOptions configures Middleware.
type MiddlewareOptions struct {
	// Backend names the backend that served r ("" for a native entry).
	// Nil records "" for every call.
	Backend func(r *mcp.Request) string
}

// gated maps each gated method to the kind recorded; the entry's name is
// the request's EntryName (params.name, or params.uri for resources/read).
var gated = map[string]struct{ kind string }{
	"tools/call":     {string(mcp.KindTool)},
	"resources/read": {string(mcp.KindResource)},
	"prompts/get":    {string(mcp.KindPrompt)},
}

// Middleware records every tools/call, resources/read and prompts/get
// served by the chain it wraps to l: the caller's identity, the entry's
// name (never its arguments), the outcome and the time taken.
func Middleware(l *Log, opts MiddlewareOptions) mcp.Middleware {
	return func(next mcp.Handler) mcp.Handler {
		return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
			g, ok := gated[r.Method]
			if !ok {
				return next.ServeMCP(ctx, r)
			}
			start := time.Now()
			id, _ := mcp.IdentityFrom(ctx)
			name, _ := r.EntryName()
			rec := store.AuditRecord{
				Time: start.UTC(), Subject: id.Subject, TokenID: id.TokenID, Role: id.Role,
				Kind: g.kind, Name: truncate(name, maxNameBytes),
			}
			finish := func(outcome string, code int64) {
				rec.Duration = time.Since(start)
				rec.Outcome, rec.Code = outcome, code
				if opts.Backend != nil {
					rec.Backend = opts.Backend(r)
				}
				_ = l.Record(rec) // a refusal after Close is logged by the Log
			}

			// A panic is recorded as the engine will answer it, and left
			// to unwind: not recovering keeps the original stack for the
			// engine's log.
			returned := false
			defer func() {
				if !returned {
					finish(store.OutcomeError, jsonrpc.CodeInternalError)
				}
			}()
			res, err := next.ServeMCP(ctx, r)
			returned = true
			finish(Classify(res, err))
			return res, err
		})
	}
}

// Classify names the outcome of a gated call from its handler's answer,
// and the JSON-RPC code answered (0 for a result).
//
// The gate's refusals are recognised by code AND data.kind: some SDKs use
// -32000 and -32001 for other things (a timeout), and those are errors,
// not refusals.
func Classify(result json.RawMessage, err error) (outcome string, code int64) {
	if err == nil {
		if isErr, _ := jsonrpc.Lookup(result, "isError"); string(isErr) == "true" {
			return store.OutcomeToolError, 0
		}
		return store.OutcomeOK, 0
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		// The engine answers any other error as an internal error.
		return store.OutcomeError, jsonrpc.CodeInternalError
	}
	kind, _ := jsonrpc.LookupString(je.Data, "kind")
	switch {
	case je.Code == jsonrpc.CodeForbidden && kind == "forbidden":
		return store.OutcomeForbidden, je.Code
	case je.Code == jsonrpc.CodeRateLimited && kind == "rate_limited":
		return store.OutcomeRateLimited, je.Code
	case je.Code == jsonrpc.CodeInvalidParams:
		return store.OutcomeInvalid, je.Code
	}
	return store.OutcomeError, je.Code
}

// truncate cuts s to at most n bytes on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
