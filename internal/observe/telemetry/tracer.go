// tracer.go builds the Tracer from its options: whether tracing is on (an
// endpoint configured, or the standard OTEL_EXPORTER_OTLP_* environment),
// the OTLP/HTTP exporter, the sampler and the resource naming the service.

package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation in every span.
const scope = "github.com/mcpgate/mcpgate/internal/observe/telemetry"

// exportTimeout bounds one export (OTLP's default).
const exportTimeout = 10 * time.Second

// DefaultServiceName is service.name when neither the options nor
// OTEL_SERVICE_NAME give one.
const DefaultServiceName = "mcpgate"

// Options configures New.
type Options struct {
	// Endpoint is the collector's OTLP/HTTP URL: a base such as
	// "http://127.0.0.1:4318" (spans go to /v1/traces), or a URL with a
	// path of its own, used as it is. Empty: the OTEL_EXPORTER_OTLP_*
	// environment decides, and tracing is off when it names no endpoint.
	Endpoint string
	// Headers go with every export (a collector's Authorization). Their
	// values are kept out of every log line.
	Headers map[string]string
	// ServiceName is service.name (default: OTEL_SERVICE_NAME, or
	// DefaultServiceName); ServiceVersion is service.version.
	ServiceName, ServiceVersion string
	// SampleRatio is the share of new traces recorded, from 0 to 1; nil
	// records all. A trace the caller began keeps the caller's choice.
	SampleRatio *float64
	// Disabled turns tracing off whatever the environment says.
	Disabled bool
	// Getenv reads the environment that decides whether tracing is on and
	// the service's name (default os.Getenv). The exporter itself reads
	// the rest of OTEL_EXPORTER_OTLP_* from the process's environment.
	Getenv func(string) string
	Logger *slog.Logger // default: discard
}

// Tracer makes the gateway's spans. One that is off (Enabled false) is
// left out by the gateway altogether.
type Tracer struct {
	provider *sdktrace.TracerProvider // nil when off
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	exporter *loggedExporter
	// closeIdle lets go of the exporter's connections once it is shut
	// down.
	closeIdle func()
}

// On reports whether the options turn tracing on: an endpoint configured,
// or one in the standard environment, unless disabled in the options or by
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
func (o Options) On() bool {
	getenv := o.getenv()
	switch {
	case o.Disabled, strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true"), getenv("OTEL_TRACES_EXPORTER") == "none":
		return false
	case o.Endpoint != "":
		return true
	}
	return getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

func (o Options) getenv() func(string) string {
	if o.Getenv != nil {
		return o.Getenv
	}
	return os.Getenv
}

// New returns a Tracer exporting to the configured collector, or one that
// is off. Nothing is sent until the first span ends; an unreachable
// collector is logged, never fatal.
func New(ctx context.Context, o Options) (*Tracer, error) {
	if !o.On() {
		return &Tracer{}, nil
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// The exporter's own HTTP client shares one transport among every
	// exporter of the process and never lets go of its connections; ours
	// is closed with the Tracer.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	opts := []otlptracehttp.Option{otlptracehttp.WithHTTPClient(&http.Client{Transport: transport, Timeout: exportTimeout})}
	if o.Endpoint != "" {
		u, err := tracesURL(o.Endpoint)
		if err != nil {
			return nil, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	if len(o.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(o.Headers))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res, err := o.resource(ctx)
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, err
	}
	logged := newLoggedExporter(exp, o.Logger, o.secrets())
	ratio := 1.0
	if o.SampleRatio != nil {
		ratio = *o.SampleRatio
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(logged),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
	)
	return &Tracer{
		provider:  tp,
		tracer:    tp.Tracer(scope),
		prop:      propagation.TraceContext{},
		exporter:  logged,
		closeIdle: transport.CloseIdleConnections,
	}, nil
}

// secrets are the header values sent to the collector, configured or
// from the standard environment, which no log line may show.
func (o Options) secrets() []string {
	var out []string
	for _, v := range o.Headers {
		out = append(out, v)
	}
	getenv := o.getenv()
	for _, env := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, kv := range strings.Split(getenv(env), ",") {
			if _, v, ok := strings.Cut(kv, "="); ok {
				if u, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
					v = u
				}
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	return out
}

// tracesURL is where spans go: a base URL gets the standard /v1/traces
// path, as OTEL_EXPORTER_OTLP_ENDPOINT does; a URL with a path keeps it.
func tracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("tracing: endpoint %q is not an http:// or https:// URL", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// resource names the service: our default, then what the environment says
// (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME), then the options, each
// over the one before. Nothing about the process (its command line may
// hold secrets) is added.
func (o Options) resource(ctx context.Context) (*resource.Resource, error) {
	ropts := []resource.Option{
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		resource.WithFromEnv(),
	}
	var over []attribute.KeyValue
	if name := o.getenv()("OTEL_SERVICE_NAME"); name != "" {
		over = append(over, attribute.String("service.name", name))
	}
	if o.ServiceName != "" {
		over = append(over, attribute.String("service.name", o.ServiceName))
	}
	if o.ServiceVersion != "" {
		over = append(over, attribute.String("service.version", o.ServiceVersion))
	}
	if len(over) > 0 {
		ropts = append(ropts, resource.WithAttributes(over...))
	}
	res, err := resource.New(ctx, ropts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return res, nil
}

// Enabled reports whether spans are made and exported.
func (t *Tracer) Enabled() bool { return t != nil && t.provider != nil }

// Flush exports the spans ended so far, waiting at most until ctx ends.
func (t *Tracer) Flush(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	return t.provider.ForceFlush(ctx)
}

// Shutdown exports the spans still queued and stops the exporter; it
// waits at most until ctx ends. Safe on a Tracer that is off.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	err := t.provider.Shutdown(ctx)
	t.closeIdle()
	if err != nil {
		return fmt.Errorf("tracing: %s", t.exporter.scrub(err.Error()))
	}
	return nil
}
