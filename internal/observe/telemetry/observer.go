// observer.go makes one server span per MCP request, named for the method
// and, for a gated call, the catalogue entry it reached ("tools/call
// search"). It carries the backend, the outcome and the JSON-RPC code, all
// as the engine resolved and classified them. The span begins before the
// request's chain runs, so that a refused call has its span too, and
// relayed calls' client spans are its children.

package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate/internal/textcut"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
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
	keyBackendKind = attribute.Key("mcpgate.backend.kind")
	keyTransport   = attribute.Key("network.transport")
	keyEra         = attribute.Key("mcpgate.era")
	keyDecision    = attribute.Key("mcpgate.gate.decision")
	keyDeniedBy    = attribute.Key("mcpgate.gate.denied_by")
	keyRelay       = attribute.Key("mcpgate.relay")
	unknownMethod  = "unknown"
	maxAttrLength  = 256
	toolErrorLabel = "tool_error"
)

// Observer makes a server span of every request the engine serves (an
// mcp.Observer), as a child of the caller's trace when the request carried
// one (see HTTP). Nothing the caller sent as a value is recorded. A method
// the engine does not serve is named "unknown". An entry is named only when
// the engine found it in the catalogue, by its catalogue name: a template's
// pattern, not the URI read.
func (t *Tracer) Observer() mcp.Observer { return observer{t} }

type observer struct{ t *Tracer }

func (o observer) Begin(ctx context.Context, r *mcp.Request) context.Context {
	ctx = o.t.fromMeta(ctx, r.Meta()) // meta.go
	ctx, _ = o.t.tracer.Start(ctx, "mcp", trace.WithSpanKind(trace.SpanKindServer))
	return ctx
}

func (observer) End(ctx context.Context, r *mcp.Request, e mcp.End) {
	span := trace.SpanFromContext(ctx)
	defer span.End()
	if span.IsRecording() {
		finish(ctx, span, r, e)
	}
}

// finish names the span and sets its attributes and status.
func finish(ctx context.Context, span trace.Span, r *mcp.Request, e mcp.End) {
	method := cut(r.Method)
	if e.Code == jsonrpc.CodeMethodNotFound {
		method = unknownMethod
	}
	name := method
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, keyMethod.String(method), keyOutcome.String(string(e.Outcome)))
	t := r.Target()
	if t != nil && t.Found {
		entry := cut(t.Entry.Name)
		name += " " + entry
		attrs = append(attrs, keyEntry.String(entry), keyEntryKind.String(string(t.Entry.Kind)))
		switch t.Entry.Kind {
		case mcp.KindTool:
			attrs = append(attrs, keyToolName.String(entry))
		case mcp.KindPrompt:
			attrs = append(attrs, keyPromptName.String(entry))
		}
	}
	if v := r.Version(); v != "" {
		attrs = append(attrs, keyVersion.String(cut(v)))
	}
	if t != nil && t.Entry.Owner != "" {
		attrs = append(attrs, keyBackend.String(cut(t.Entry.Owner)))
	}
	if id, ok := mcp.IdentityFrom(ctx); ok && id.Role != "" {
		attrs = append(attrs, keyRole.String(cut(id.Role)))
	}
	switch {
	case e.Code != 0:
		setCode(span, e.Code)
	case e.Outcome == mcp.OutcomeToolError:
		attrs = append(attrs, keyErrorType.String(toolErrorLabel))
		span.SetStatus(codes.Error, toolErrorLabel)
	}
	span.SetName(name)
	span.SetAttributes(attrs...)
}

// cut bounds a value from configuration or the catalogue, on a character
// boundary, and makes it valid UTF-8, which OTLP's protobuf strings
// require (one bad string would fail the whole export).
func cut(s string) string { return textcut.Valid(s, maxAttrLength) }
