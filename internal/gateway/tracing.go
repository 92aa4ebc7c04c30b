// tracing.go wires OpenTelemetry traces into the gateway when an OTLP
// endpoint is configured (tracing.otlp_endpoint, or the standard
// OTEL_EXPORTER_OTLP_ENDPOINT environment). There is a server span per MCP
// request and a client span per call relayed to a backend. The caller's
// traceparent is honoured on HTTP, and the spans are flushed when the
// gateway closes. Off, nothing is installed at all.

package gateway

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/observe/telemetry"
	"github.com/mcpgate/mcpgate/mcp"
)

// tracingOptions reads the collector's header values from the
// environment, so that a missing secret refuses New naming its key.
func (g *Gateway) tracingOptions(info mcp.Implementation) (telemetry.Options, error) {
	t := g.cfg.Tracing
	o := telemetry.Options{
		Endpoint: t.OTLPEndpoint, ServiceName: t.ServiceName, ServiceVersion: info.Version,
		SampleRatio: t.SampleRatio, Disabled: t.Disabled, Logger: g.log,
	}
	for h, from := range t.HeadersFrom {
		v, ok := os.LookupEnv(from)
		if !ok {
			return o, fmt.Errorf("tracing.headers_from.%s: environment variable %s is not set", h, from)
		}
		if o.Headers == nil {
			o.Headers = map[string]string{}
		}
		o.Headers[h] = v
	}
	return o, nil
}

// startTracing builds the tracer; off, it is one that is not Enabled.
func (g *Gateway) startTracing(ctx context.Context, o telemetry.Options) error {
	t, err := telemetry.New(ctx, o)
	if err != nil {
		return err
	}
	g.tracer = t
	if t.Enabled() {
		endpoint := o.Endpoint
		if endpoint == "" {
			endpoint = "from OTEL_EXPORTER_OTLP_* environment"
		}
		g.log.Info("tracing on", "endpoint", endpoint)
		g.gate.tracer = t
		g.metrics.Spans(func() (uint64, uint64) { s := t.Stats(); return s.Exported, s.Failed })
	}
	return nil
}

// upstreamObserver is the relay's hook for client spans (nil when off).
func (g *Gateway) upstreamObserver() catalogue.Observer {
	if !g.tracer.Enabled() {
		return nil
	}
	return g.tracer.Upstream
}

// traceHTTP joins the caller's trace from its traceparent header.
func (g *Gateway) traceHTTP(h http.Handler) http.Handler {
	if !g.tracer.Enabled() {
		return h
	}
	return g.tracer.HTTP(h)
}
