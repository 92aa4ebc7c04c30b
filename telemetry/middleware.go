// middleware.go makes one server span per MCP request: named for the
// method and, for a gated call, the catalogue entry it reached
// ("tools/call search"), with the backend, the outcome and the JSON-RPC
// code. It wraps the whole method chain, outside the gate, so that a
// refused call has its span too.

package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate/audit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/store"
)

// Attribute keys. Those of OpenTelemetry's MCP and RPC conventions are
// used where they exist; the gateway's own are prefixed mcpgate.
const (
	keyMethod      = attribute.Key("mcp.method.name")
	keyVersion     = attribute.Key("mcp.protocol.version")
	keyToolName    = attribute.Key("gen_ai.tool.name")
	keyPromptName  = attribute.Key("gen_ai.prompt.name")
	keyErrorCode   = attribute.Key("rpc.jsonrpc.error_code")
	keyErrorType   = attribute.Key("error.type")
	keyEntry       = attribute.Key("mcpgate.entry")
	keyEntryKind   = attribute.Key("mcpgate.entry.kind")
	keyBackend     = attribute.Key("mcpgate.backend")
	keyOutcome     = attribute.Key("mcpgate.outcome")
	keyRole        = attribute.Key("mcpgate.role")
	unknownMethod  = "unknown"
	maxAttrLength  = 256
	toolErrorLabel = "tool_error"
)

// MiddlewareOptions configures Middleware.
type MiddlewareOptions struct {
	// Backend names the backend that served r ("" for a native entry).
	Backend func(r *mcp.Request) string
}

// Middleware starts a server span around every request the chain serves,
// as a child of the caller's trace when the request carried one (see
// HTTP). Nothing the caller sent as a value is recorded: a method the
// engine does not serve is named "unknown", and an entry is named only
// once the gate has been asked about it (see EntryGate).
func (t *Tracer) Middleware(opts MiddlewareOptions) mcp.Middleware {
	return func(next mcp.Handler) mcp.Handler {
		return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
			ctx, span := t.tracer.Start(ctx, "mcp", trace.WithSpanKind(trace.SpanKindServer))
			if !span.IsRecording() {
				defer span.End()
				return next.ServeMCP(ctx, r)
			}
			seen := new(reachedEntry)
			ctx = context.WithValue(ctx, reachedKey{}, seen)
			// A panic is recorded as the engine will answer it (-32603)
			// and left to unwind with its stack.
			returned := false
			defer func() {
				if !returned {
					finish(ctx, span, r, opts, seen, store.OutcomeError, jsonrpc.CodeInternalError, false)
				}
				span.End()
			}()
			res, err := next.ServeMCP(ctx, r)
			returned = true
			outcome, code := audit.Classify(res, err)
			finish(ctx, span, r, opts, seen, outcome, code, isMethodNotFound(err))
			return res, err
		})
	}
}

// finish names the span and sets its attributes and status.
func finish(ctx context.Context, span trace.Span, r *mcp.Request, opts MiddlewareOptions, seen *reachedEntry,
	outcome string, code int64, unknown bool) {
	method := cut(r.Method)
	if unknown {
		method = unknownMethod
	}
	name := method
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, keyMethod.String(method), keyOutcome.String(outcome))
	if e, ok := seen.entry(); ok {
		name += " " + e.Name
		attrs = append(attrs, keyEntry.String(e.Name), keyEntryKind.String(string(e.Kind)))
		switch e.Kind {
		case mcp.KindTool:
			attrs = append(attrs, keyToolName.String(e.Name))
		case mcp.KindPrompt:
			attrs = append(attrs, keyPromptName.String(e.Name))
		}
	}
	if r.Session != nil {
		if v := r.Session.Version(); v != "" {
			attrs = append(attrs, keyVersion.String(cut(v)))
		}
	}
	if opts.Backend != nil {
		if b := opts.Backend(r); b != "" {
			attrs = append(attrs, keyBackend.String(cut(b)))
		}
	}
	if id, ok := mcp.IdentityFrom(ctx); ok && id.Role != "" {
		attrs = append(attrs, keyRole.String(cut(id.Role)))
	}
	switch {
	case code != 0:
		c := strconv.FormatInt(code, 10)
		attrs = append(attrs, keyErrorCode.Int64(code), keyErrorType.String(c))
		span.SetStatus(codes.Error, "JSON-RPC error "+c)
	case outcome == store.OutcomeToolError:
		attrs = append(attrs, keyErrorType.String(toolErrorLabel))
		span.SetStatus(codes.Error, toolErrorLabel)
	}
	span.SetName(name)
	span.SetAttributes(attrs...)
}

func isMethodNotFound(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound
}

// cut bounds a value from configuration or the catalogue, on a character
// boundary, and makes it valid UTF-8, which OTLP's protobuf strings
// require (one bad string would fail the whole export).
func cut(s string) string {
	if len(s) > maxAttrLength {
		n := maxAttrLength
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// EntryGate wraps a gate so that Middleware learns which catalogue entry a
// gated call reached. The engine asks the gate only once it has found the
// entry, so the name is the catalogue's, never an unknown name a caller
// sent, and a template's pattern rather than the URI read.
func (t *Tracer) EntryGate(g mcp.Gate) mcp.Gate { return entryGate{g} }

type entryGate struct{ mcp.Gate }

func (g entryGate) Admit(ctx context.Context, e mcp.Entry) error {
	// Opening a session is asked of the gate too (mcp.AdmitSession), but
	// is no catalogue entry.
	if seen, ok := ctx.Value(reachedKey{}).(*reachedEntry); ok && e.Kind != mcp.KindSession {
		seen.reach(e)
	}
	return g.Gate.Admit(ctx, e)
}

type reachedKey struct{}

// reachedEntry holds the first entry a request reached: a handler that
// makes further gated calls with the same context does not rename it.
type reachedEntry struct{ v atomic.Pointer[mcp.Entry] }

func (r *reachedEntry) reach(e mcp.Entry) {
	e.Name, e.MinRole = cut(e.Name), ""
	r.v.CompareAndSwap(nil, &e)
}

func (r *reachedEntry) entry() (mcp.Entry, bool) {
	if e := r.v.Load(); e != nil {
		return *e, true
	}
	return mcp.Entry{}, false
}
