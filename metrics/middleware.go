// middleware.go records every MCP method call, and for each gated call
// (tools/call, resources/read, prompts/get) its entry, backend, outcome,
// error code and duration. It wraps the whole method chain, outside the
// gate, so that refusals are counted as well as calls that ran.

package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/audit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/store"
)

// MiddlewareOptions configures Middleware.
type MiddlewareOptions struct {
	// Backend names the backend that served r ("" for a native entry).
	// Nil records "" for every call.
	Backend func(r *mcp.Request) string
}

// gatedKinds maps each gated method to the entry kind it reaches.
var gatedKinds = map[string]mcp.EntryKind{
	"tools/call":     mcp.KindTool,
	"resources/read": mcp.KindResource,
	"prompts/get":    mcp.KindPrompt,
}

// Middleware counts every method call and records each gated call's
// outcome, classified exactly as the audit log classifies it
// (audit.Classify), so that a dashboard and the audit trail agree.
//
// The entry's name is the one the gate was asked about (see EntryGate):
// a call that never reached a catalogued entry is recorded as "unknown",
// because the name it asked for is whatever the caller sent.
func (m *Metrics) Middleware(opts MiddlewareOptions) mcp.Middleware {
	return func(next mcp.Handler) mcp.Handler {
		return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
			kind, gated := gatedKinds[r.Method]
			if !gated {
				res, err := next.ServeMCP(ctx, r)
				m.requests.WithLabelValues(methodLabel(r.Method, err)).Inc()
				return res, err
			}
			start := time.Now()
			seen := new(reachedEntry)
			ctx = context.WithValue(ctx, reachedKey{}, seen)

			// A panic is counted as the engine will answer it (-32603)
			// and left to unwind with its stack.
			returned := false
			defer func() {
				if !returned {
					m.requests.WithLabelValues(r.Method).Inc()
					m.observe(ctx, r, opts, kind, seen, start, store.OutcomeError, jsonrpc.CodeInternalError)
				}
			}()
			res, err := next.ServeMCP(ctx, r)
			returned = true
			m.requests.WithLabelValues(r.Method).Inc()
			outcome, code := audit.Classify(res, err)
			m.observe(ctx, r, opts, kind, seen, start, outcome, code)
			return res, err
		})
	}
}

func (m *Metrics) observe(ctx context.Context, r *mcp.Request, opts MiddlewareOptions, kind mcp.EntryKind,
	seen *reachedEntry, start time.Time, outcome string, code int64) {
	backend := ""
	if opts.Backend != nil {
		backend = label(opts.Backend(r))
	}
	m.calls.WithLabelValues(string(kind), seen.name(), backend, outcome).Inc()
	m.duration.WithLabelValues(string(kind), backend).Observe(time.Since(start).Seconds())
	if code != 0 {
		m.callErrors.WithLabelValues(m.codes.label(code)).Inc()
	}
	if outcome == store.OutcomeRateLimited {
		// The role was checked against the configured roles by
		// authentication: a bounded set.
		id, _ := mcp.IdentityFrom(ctx)
		m.rateLimited.WithLabelValues(label(id.Role)).Inc()
	}
}

// methodLabel is the method as recorded: a method the engine answered
// "method not found" is "unknown", since a caller can send any string.
func methodLabel(method string, err error) string {
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound {
		return unknown
	}
	return label(method)
}

// EntryGate wraps a gate so that Middleware learns which catalogue entry
// a gated call reached. The engine asks the gate only once it has found
// the entry, so an entry named here exists; its name is the catalogue's
// (a resource template's pattern, not the URI read), which keeps the
// label's values to the catalogue's size.
func EntryGate(g mcp.Gate) mcp.Gate { return entryGate{g} }

type entryGate struct{ mcp.Gate }

func (g entryGate) Admit(ctx context.Context, e mcp.Entry) error {
	// Opening a session is asked of the gate too (mcp.AdmitSession), but
	// is no catalogue entry.
	if seen, ok := ctx.Value(reachedKey{}).(*reachedEntry); ok && e.Kind != mcp.KindSession {
		seen.reach(e.Name)
	}
	return g.Gate.Admit(ctx, e)
}

type reachedKey struct{}

// reachedEntry holds the first entry a call reached: a handler that makes
// further gated calls with the same context does not rename the call.
type reachedEntry struct{ v atomic.Pointer[string] }

func (r *reachedEntry) reach(name string) {
	n := label(name)
	r.v.CompareAndSwap(nil, &n)
}

func (r *reachedEntry) name() string {
	if n := r.v.Load(); n != nil {
		return *n
	}
	return unknown
}
