package config

import (
	"errors"
	"strings"
	"testing"
)

func TestTracingSectionParses(t *testing.T) {
	c, err := Parse([]byte(`
tracing:
  otlp_endpoint: "http://127.0.0.1:4318"
  service_name: gateway-eu
  sample_ratio: 0.25
  headers_from: {Authorization: OTLP_TOKEN}
`))
	if err != nil {
		t.Fatal(err)
	}
	tr := c.Tracing
	if tr.OTLPEndpoint != "http://127.0.0.1:4318" || tr.ServiceName != "gateway-eu" || tr.SampleRatio == nil || *tr.SampleRatio != 0.25 ||
		tr.HeadersFrom["Authorization"] != "OTLP_TOKEN" || tr.Disabled {
		t.Errorf("tracing = %+v", tr)
	}
	if c, err = Parse(nil); err != nil || c.Tracing.OTLPEndpoint != "" || c.Tracing.SampleRatio != nil {
		t.Errorf("no section: %+v %v", c.Tracing, err)
	}
	if c, err = Parse([]byte("tracing: {sample_ratio: 0}")); err != nil || *c.Tracing.SampleRatio != 0 {
		t.Errorf("sample_ratio 0 is a ratio like any other: %v", err)
	}
}

// A bad tracing section is refused naming the key; the collector's
// credential may not be written in the endpoint's URL.
func TestTracingErrorsNameTheKey(t *testing.T) {
	for _, tt := range []struct{ name, yaml, key string }{
		{"not a URL", "tracing: {otlp_endpoint: '127.0.0.1:4318'}", "tracing.otlp_endpoint"},
		{"grpc scheme", "tracing: {otlp_endpoint: 'grpc://collector:4317'}", "tracing.otlp_endpoint"},
		{"no host", "tracing: {otlp_endpoint: 'http:///v1/traces'}", "tracing.otlp_endpoint"},
		{"credentials in the URL", "tracing: {otlp_endpoint: 'https://user:pw@collector/'}", "tracing.otlp_endpoint"},
		{"query", "tracing: {otlp_endpoint: 'https://collector/?token=x'}", "tracing.otlp_endpoint"},
		{"ratio above 1", "tracing: {sample_ratio: 1.5}", "tracing.sample_ratio"},
		{"negative ratio", "tracing: {sample_ratio: -0.1}", "tracing.sample_ratio"},
		{"bad header name", "tracing: {headers_from: {'X Bad': V}}", "tracing.headers_from"},
		{"header from nothing", "tracing: {headers_from: {Authorization: ''}}", "tracing.headers_from.Authorization"},
		{"unknown key", "tracing: {endpoint: 'http://x'}", "tracing.endpoint"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			var ke *KeyError
			if errors.As(err, &ke) {
				if ke.Key != tt.key {
					t.Fatalf("KeyError.Key = %q, want %q", ke.Key, tt.key)
				}
			} else if !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("error %q does not name %q", err, tt.key)
			}
		})
	}
}
