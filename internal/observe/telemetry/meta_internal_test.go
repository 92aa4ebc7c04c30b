package telemetry

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// A request's _meta.traceparent is read as its server decodes _meta:
// with its key spelled with an escape too.
func TestTraceContextInMetaIsReadHoweverItsKeyIsSpelled(t *testing.T) {
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tr := &Tracer{prop: propagation.TraceContext{}}
	for _, meta := range []string{
		`{"traceparent":"00-` + traceID + `-` + spanID + `-01"}`,
		`{"tr\u0061ceparent":"00-` + traceID + `-` + spanID + `-01"}`,
	} {
		sc := trace.SpanContextFromContext(tr.fromMeta(context.Background(), json.RawMessage(meta)))
		if sc.TraceID().String() != traceID || sc.SpanID().String() != spanID {
			t.Errorf("_meta %s gave trace %s span %s, want %s %s", meta, sc.TraceID(), sc.SpanID(), traceID, spanID)
		}
	}
}
