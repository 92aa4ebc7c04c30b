// meta.go carries trace context in _meta, as the 2026-07-28 revision
// reserves it (SEP-414: traceparent, tracestate and baggage, in the W3C
// formats). A request's _meta.traceparent makes its server span a child of
// the caller's trace; it wins over an HTTP traceparent, being the request's
// own. Each call relayed to a backend carries the trace context of its
// client span in _meta, so that the backend's spans nest under the
// gateway's.

package telemetry

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/propagation"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// traceKeys are the _meta keys of trace context the propagator reads and
// writes.
var traceKeys = []string{"traceparent", "tracestate"}

// fromMeta returns ctx with the trace context of a request's _meta, when
// it has a traceparent.
func (t *Tracer) fromMeta(ctx context.Context, meta json.RawMessage) context.Context {
	if !jsonrpc.MayHold(meta, "traceparent") {
		return ctx
	}
	carrier := propagation.MapCarrier{}
	for _, k := range traceKeys {
		if v, ok := jsonrpc.LookupString(meta, k); ok {
			carrier[k] = v
		}
	}
	if carrier["traceparent"] == "" {
		return ctx
	}
	return t.prop.Extract(ctx, carrier)
}

// toMeta sets ctx's trace context in the request's _meta.
func (t *Tracer) toMeta(ctx context.Context, out *mcp.Outbound) {
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	var members []byte
	for _, k := range traceKeys {
		if v := carrier[k]; v != "" {
			if len(members) > 0 {
				members = append(members, ',')
			}
			members = jsonrpc.AppendString(members, k)
			members = append(members, ':')
			members = jsonrpc.AppendString(members, v)
		}
	}
	if len(members) > 0 {
		out.Meta, out.MetaKeys = members, traceKeys
	}
}
