package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/observe/telemetry"
	"github.com/mcpgate/mcpgate/internal/otlptest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// env is a fake environment for Options.Getenv.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// Tracing is on when an endpoint is configured, or when the standard
// OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT names one; off otherwise, and off
// whenever the configuration, OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER
// says so.
func TestTracingIsOnOnlyWithAnEndpoint(t *testing.T) {
	for _, c := range []struct {
		name string
		o    telemetry.Options
		on   bool
	}{
		{"nothing", telemetry.Options{Getenv: env()}, false},
		{"configured", telemetry.Options{Endpoint: "http://127.0.0.1:4318", Getenv: env()}, true},
		{"standard env", telemetry.Options{Getenv: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")}, true},
		{"standard traces env", telemetry.Options{Getenv: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces")}, true},
		{"disabled in the file", telemetry.Options{Endpoint: "http://127.0.0.1:4318", Disabled: true, Getenv: env()}, false},
		{"disabled env over the file", telemetry.Options{Endpoint: "http://127.0.0.1:4318", Getenv: env("OTEL_SDK_DISABLED", "true")}, false},
		{"exporter none", telemetry.Options{Getenv: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_TRACES_EXPORTER", "none")}, false},
	} {
		if got := c.o.On(); got != c.on {
			t.Errorf("%s: On() = %v, want %v", c.name, got, c.on)
		}
	}
	tr, err := telemetry.New(context.Background(), telemetry.Options{Getenv: env()})
	if err != nil || tr.Enabled() {
		t.Errorf("New without an endpoint: enabled %v, err %v", tr.Enabled(), err)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown of a Tracer that is off: %v", err)
	}
}

// newTracer exports to rcv; the test's cleanup shuts it down.
func newTracer(t *testing.T, rcv *otlptest.Receiver, o telemetry.Options) *telemetry.Tracer {
	t.Helper()
	o.Endpoint = rcv.URL()
	if o.Getenv == nil {
		o.Getenv = env()
	}
	tr, err := telemetry.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr
}

// serve runs one request under the tracer's observer, as the engine does
// (Begin, the handler, End with the engine's classification), over HTTP
// with the given headers so that the caller's trace context is honoured.
func serve(t *testing.T, tr *telemetry.Tracer, header http.Header, r *mcp.Request, h mcp.HandlerFunc) {
	t.Helper()
	obs := tr.Observer()
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req.Header = header
	tr.HTTP(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
		ctx := obs.Begin(req.Context(), r)
		start := time.Now()
		res, err := h(ctx, r)
		e := mcp.End{Start: start, Duration: time.Since(start)}
		e.Outcome, e.Code = mcp.Classify(r.Method, res, err)
		obs.End(ctx, r, e)
	})).ServeHTTP(httptest.NewRecorder(), req)
}

func ok(context.Context, *mcp.Request) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }

// A base URL gets the standard /v1/traces path, and spans are named by
// service: the configured name over OTEL_SERVICE_NAME over "mcpgate".
func TestSpansReachTheCollectorUnderTheServiceName(t *testing.T) {
	for _, c := range []struct {
		name, configured, envName, want string
	}{
		{"default", "", "", "mcpgate"},
		{"environment", "", "from-env", "from-env"},
		{"configured over the environment", "gw-eu", "from-env", "gw-eu"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rcv := otlptest.Start(t)
			tr := newTracer(t, rcv, telemetry.Options{ServiceName: c.configured, Getenv: env("OTEL_SERVICE_NAME", c.envName)})
			serve(t, tr, http.Header{}, &mcp.Request{Method: "ping"}, ok)
			if err := tr.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := rcv.Find("ping")
			if len(spans) != 1 || spans[0].Service != c.want {
				t.Fatalf("spans %+v, want one ping span of service %q", rcv.Spans(), c.want)
			}
		})
	}
}

const (
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan   = "00f067aa0ba902b7"
	sampledTrace = "00-" + callerTrace + "-" + callerSpan + "-01"
)

// With sample_ratio 0 the gateway begins no trace of its own, but a
// caller's sampled trace is continued: its span is the parent.
func TestSampleRatioZeroStillContinuesTheCallersTrace(t *testing.T) {
	rcv := otlptest.Start(t)
	zero := 0.0
	tr := newTracer(t, rcv, telemetry.Options{SampleRatio: &zero})
	serve(t, tr, http.Header{}, &mcp.Request{Method: "ping"}, ok)
	serve(t, tr, http.Header{"Traceparent": {sampledTrace}}, &mcp.Request{Method: "tools/list"}, ok)
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	if len(spans) != 1 || spans[0].Name != "tools/list" {
		t.Fatalf("spans %+v, want only the caller's tools/list", spans)
	}
	if s := spans[0]; s.TraceID != callerTrace || s.ParentSpanID != callerSpan {
		t.Errorf("span in trace %s under %s, want %s under %s", s.TraceID, s.ParentSpanID, callerTrace, callerSpan)
	}
}

// A method the engine does not serve is named "unknown", not by what the
// caller sent; a refusal's span carries the code and an error status, and
// never the error's message.
func TestUnknownMethodAndErrorsAreNamedByCodeOnly(t *testing.T) {
	rcv := otlptest.Start(t)
	tr := newTracer(t, rcv, telemetry.Options{})
	const junk = "x/caller-chosen-7f3a"
	serve(t, tr, http.Header{}, &mcp.Request{Method: junk}, func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+junk, nil)
	})
	const echoed = "the-argument-value-5e1d"
	serve(t, tr, http.Header{}, &mcp.Request{Method: "tools/call"}, func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return nil, jsonrpc.NewError(-32099, "bad value "+echoed, nil)
	})
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if u := rcv.Find("unknown"); len(u) != 1 || u[0].Attrs["mcp.method.name"] != "unknown" || u[0].Attrs["rpc.jsonrpc.error_code"] != int64(-32601) {
		t.Errorf("unknown method spans %+v", rcv.Spans())
	}
	c := rcv.Find("tools/call")
	if len(c) != 1 || c[0].Attrs["rpc.jsonrpc.error_code"] != int64(-32099) || c[0].Attrs["mcpgate.outcome"] != "error" ||
		c[0].StatusMessage != "JSON-RPC error -32099" {
		t.Errorf("failed call spans %+v", c)
	}
	for _, leak := range []string{junk, echoed} {
		if bytes.Contains(rcv.Raw(), []byte(leak)) {
			t.Errorf("the export contains %q", leak)
		}
	}
}

// A relayed call's client span ends with the backend's code, or as
// unreachable when the backend could not be reached; the error's message
// is not recorded.
func TestUpstreamSpanClassifiesTheEnd(t *testing.T) {
	files := upstream.Call{Backend: "files", Kind: upstream.KindStdio, Version: mcp.Version20260728}
	rcv := otlptest.Start(t)
	tr := newTracer(t, rcv, telemetry.Options{})
	_, done := tr.Upstream(context.Background(), files, &mcp.Outbound{Method: "tools/call"})
	done(jsonrpc.NewError(-32602, "bad path /home/secret", nil))
	_, done = tr.Upstream(context.Background(), files, &mcp.Outbound{Method: "resources/read"})
	done(errors.New("dial tcp 127.0.0.1:1: connection refused"))
	_, done = tr.Upstream(context.Background(), files, &mcp.Outbound{Method: "prompts/get"})
	done(nil)
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	byName := map[string]otlptest.Span{}
	for _, s := range rcv.Spans() {
		byName[s.Name] = s
		if s.Attrs["mcpgate.backend"] != "files" || s.Attrs["mcpgate.backend.kind"] != "stdio" || s.Attrs["network.transport"] != "pipe" ||
			s.Attrs["mcp.protocol.version"] != mcp.Version20260728 || s.Attrs["mcpgate.era"] != "2026" {
			t.Errorf("%s: attributes %v, want the backend, its kind and transport, the revision and its era", s.Name, s.Attrs)
		}
	}
	if s := byName["tools/call"]; s.Attrs["rpc.jsonrpc.error_code"] != int64(-32602) || s.StatusMessage != "JSON-RPC error -32602" {
		t.Errorf("tools/call span %+v", s)
	}
	if s := byName["resources/read"]; s.Attrs["error.type"] != "unreachable" || s.StatusMessage != "backend unreachable" {
		t.Errorf("resources/read span %+v", s)
	}
	if s := byName["prompts/get"]; s.StatusMessage != "" || s.Attrs["error.type"] != nil {
		t.Errorf("prompts/get span %+v", s)
	}
	if bytes.Contains(rcv.Raw(), []byte("secret")) || bytes.Contains(rcv.Raw(), []byte("refused")) {
		t.Error("the export contains an error's message")
	}
}

// A collector that refuses is reported once, not once a batch, with the
// header's value cut out even when the collector echoes it; the spans
// lost are counted, and recovery is reported too.
func TestExportFailureLoggedOnceWithoutTheHeaderValue(t *testing.T) {
	const token = "otlp-secret-2a9c41"
	rcv := otlptest.Start(t)
	rcv.Fail(http.StatusUnauthorized, "refused credential "+token)
	logs := &testkit.Output{}
	tr := newTracer(t, rcv, telemetry.Options{Headers: map[string]string{"Authorization": "Bearer " + token},
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 3 {
		serve(t, tr, http.Header{}, &mcp.Request{Method: "ping"}, ok)
		if err := tr.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := rcv.Exports(); got != 3 {
		t.Fatalf("%d exports reached the collector, want 3", got)
	}
	if h := rcv.Headers()[0].Get("Authorization"); h != "Bearer "+token {
		t.Errorf("the collector got Authorization %q", h)
	}
	if s := tr.Stats(); s.Failed != 3 || s.Exported != 0 {
		t.Errorf("stats %+v, want 3 failed", s)
	}
	text := logs.String()
	if n := strings.Count(text, "exporting spans failed"); n != 1 {
		t.Errorf("%d failure lines, want 1:\n%s", n, text)
	}
	if strings.Contains(text, token) || !strings.Contains(text, "[redacted]") {
		t.Errorf("the log shows the header value, or the collector's answer was not kept:\n%s", text)
	}

	rcv.Fail(http.StatusOK, "")
	serve(t, tr, http.Header{}, &mcp.Request{Method: "ping"}, ok)
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s := tr.Stats(); s.Exported != 1 {
		t.Errorf("stats %+v after recovery, want 1 exported", s)
	}
	if !strings.Contains(logs.String(), "exporting spans again") {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
}
