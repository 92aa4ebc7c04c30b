// http.go joins the caller's trace: a W3C traceparent (and tracestate) on
// an HTTP request becomes the parent of the server spans of the MCP
// requests it carries.

package telemetry

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// HTTP passes each request to h with the trace context its headers carry
// in its context; a request without one passes unchanged.
func (t *Tracer) HTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Traceparent") != "" {
			r = r.WithContext(t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		h.ServeHTTP(w, r)
	})
}
