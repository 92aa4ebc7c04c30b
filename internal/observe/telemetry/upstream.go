// upstream.go makes a client span for each call the gateway relays to a
// backend, under the server span of the request that caused it, so that a
// trace shows how much of a call's time the backend took.

package telemetry

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Upstream is a catalogue.Observer: it starts a client span named for the
// method, with the backend's name, and ends it with the backend's
// JSON-RPC code, or "unreachable" when the backend could not be reached.
// The call carries the span's trace context in its _meta.
// The error's message is not recorded: a backend may echo arguments in it.
func (t *Tracer) Upstream(ctx context.Context, backend string, out *mcp.Outbound) (context.Context, func(error)) {
	method := out.Method
	ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(keyMethod.String(cut(method)), keyBackend.String(cut(backend))))
	t.toMeta(ctx, out) // the backend continues the trace (meta.go)
	return ctx, func(err error) {
		defer span.End()
		if err == nil || !span.IsRecording() {
			return
		}
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			c := strconv.FormatInt(je.Code, 10)
			span.SetAttributes(keyErrorCode.Int64(je.Code), keyErrorType.String(c))
			span.SetStatus(codes.Error, "JSON-RPC error "+c)
			return
		}
		span.SetAttributes(keyErrorType.String("unreachable"))
		span.SetStatus(codes.Error, "backend unreachable")
	}
}
