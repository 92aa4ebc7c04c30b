// relay.go makes the spans between the request's and the backend's. One
// is the gate's decision, in the gateway. The other is the proxy's own
// span for each exchange it relays to a tool container's server. The
// trace context the call carries in _meta joins it to the gateway's
// client span.
// Together with the server and client spans, one relayed call is one
// tree: caller, gateway, gate, backend call, proxy.

package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Gate starts a span for the gate's decision on a call to entry e, under
// the request's server span. The function it returns ends it with the
// decision: allow, or deny with the code and, when a policy rule refused,
// the rule's name (Request.DeniedBy).
func (t *Tracer) Gate(ctx context.Context, e mcp.Entry) (context.Context, func(r *mcp.Request, err error)) {
	ctx, span := t.tracer.Start(ctx, "gate", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(keyEntry.String(cut(e.Name)), keyEntryKind.String(string(e.Kind))))
	return ctx, func(r *mcp.Request, err error) {
		defer span.End()
		if !span.IsRecording() {
			return
		}
		if err == nil {
			span.SetAttributes(keyDecision.String("allow"))
			return
		}
		span.SetAttributes(keyDecision.String("deny"))
		if by := r.DeniedBy(); by != "" {
			span.SetAttributes(keyDeniedBy.String(cut(by)))
		}
		if je, ok := err.(*jsonrpc.Error); ok {
			setCode(span, je.Code)
			return
		}
		span.SetStatus(codes.Error, "refused")
	}
}

// Exchange is the proxy's observer: a server span for each MCP exchange
// it relays, named for the method (and the tool, for tools/call). It is a
// child of the trace context in the request's _meta, which the gateway
// set from its client span. The function it returns ends the span with
// the upstream's JSON-RPC code (0 for a result), or failed when there was
// no answer.
func (t *Tracer) Exchange(ctx context.Context, method string, params []byte) (context.Context, func(code int64, failed bool)) {
	meta, _ := jsonrpc.Lookup(params, "_meta")
	ctx = t.fromMeta(ctx, meta)
	name := cut(method)
	attrs := []attribute.KeyValue{keyMethod.String(name), keyRelay.String("proxy")}
	if method == "tools/call" {
		if tool, ok := jsonrpc.LookupString(params, "name"); ok {
			attrs = append(attrs, keyToolName.String(cut(tool)))
			name += " " + cut(tool)
		}
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return ctx, func(code int64, failed bool) {
		defer span.End()
		switch {
		case !span.IsRecording():
		case failed:
			span.SetAttributes(keyErrorType.String("unreachable"))
			span.SetStatus(codes.Error, "upstream unreachable")
		case code != 0:
			setCode(span, code)
		}
	}
}
