// tracing.go is the configuration of OpenTelemetry traces: where spans are
// exported (OTLP over HTTP), under which service name, how many are kept,
// and the exporter's credentials — read from the environment, never
// written in the YAML in clear.

package config

import (
	"net/url"
	"strings"
)

// Tracing configures OpenTelemetry traces. With no otlp_endpoint, traces
// follow the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) environment variable when it is
// set, and are off otherwise; Disabled turns them off whatever the
// environment says.
type Tracing struct {
	// OTLPEndpoint is the collector's OTLP/HTTP address, e.g.
	// "http://127.0.0.1:4318" (spans go to its /v1/traces), or a full URL
	// with its own path, used as it is.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// ServiceName is the service.name of the spans (default: the
	// OTEL_SERVICE_NAME environment variable, or "mcpgate").
	ServiceName string `yaml:"service_name"`
	// SampleRatio is the share of new traces recorded, from 0 to 1
	// (default 1); a trace begun by the caller keeps the caller's choice.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// HeadersFrom maps a header sent to the collector (Authorization) to
	// the environment variable holding its value.
	HeadersFrom map[string]string `yaml:"headers_from"`
	// Disabled turns tracing off, whatever the environment says.
	Disabled bool `yaml:"disabled"`
}

func (t Tracing) validate() error {
	if t.OTLPEndpoint != "" {
		u, err := url.Parse(t.OTLPEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("tracing.otlp_endpoint", "%q is not an http:// or https:// URL", t.OTLPEndpoint)
		}
		if u.User != nil {
			return bad("tracing.otlp_endpoint", "credentials in the URL are not allowed; name an environment variable in headers_from")
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return bad("tracing.otlp_endpoint", "must not have a query or a fragment")
		}
	}
	if r := t.SampleRatio; r != nil && (*r < 0 || *r > 1) {
		return bad("tracing.sample_ratio", "%v is not between 0 and 1", *r)
	}
	for h, from := range t.HeadersFrom {
		if h == "" || strings.ContainsAny(h, " \t\r\n:") {
			return bad("tracing.headers_from", "%q is not a header name", h)
		}
		if from == "" {
			return bad("tracing.headers_from."+h, "names no environment variable")
		}
	}
	return nil
}
