// upstream.go makes a client span for each call the gateway relays to a
// backend, under the server span of the request that caused it, so that a
// trace shows how much of a call's time the backend took.

package telemetry

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Upstream is a catalogue.Observer: it starts a client span named for the
// method, with the backend's name, how it is reached (its kind and the
// network transport) and the revision spoken on the call's session (its
// era). It ends the span with the backend's JSON-RPC code, or
// "unreachable" when the backend could not be reached. The call carries
// the span's trace context in its _meta. The error's message is not
// recorded: a backend may echo arguments in it.
func (t *Tracer) Upstream(ctx context.Context, c upstream.Call, out *mcp.Outbound) (context.Context, func(error)) {
	method := out.Method
	attrs := []attribute.KeyValue{keyMethod.String(cut(method)), keyBackend.String(cut(c.Backend)),
		keyBackendKind.String(string(c.Kind)), keyTransport.String(c.Kind.Transport())}
	if c.Version != "" {
		attrs = append(attrs, keyVersion.String(cut(c.Version)), keyEra.String(era(c.Version)))
	}
	ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	t.toMeta(ctx, out) // the backend continues the trace (meta.go)
	return ctx, func(err error) {
		defer span.End()
		if err == nil || !span.IsRecording() {
			return
		}
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			setCode(span, je.Code)
			return
		}
		span.SetAttributes(keyErrorType.String("unreachable"))
		span.SetStatus(codes.Error, "backend unreachable")
	}
}

// setCode marks a span as answered with a JSON-RPC error.
func setCode(span trace.Span, code int64) {
	c := strconv.FormatInt(code, 10)
	span.SetAttributes(keyErrorCode.Int64(code), keyErrorType.String(c))
	span.SetStatus(codes.Error, "JSON-RPC error "+c)
}

// era names a revision's era: "2026" for the sessionless revision, "2025"
// for the session ones.
func era(version string) string {
	if mcp.IsSessionlessVersion(version) {
		return "2026"
	}
	return "2025"
}
