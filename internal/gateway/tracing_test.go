// tracing_test.go pins the gateway's traces end to end: a real gateway
// with authentication, a real backend relayed over HTTP, our MCP client
// sending a W3C traceparent, and an OTLP/HTTP collector on a loopback
// socket decoding what the exporter sends. Spans are named and attributed
// by method, catalogue entry, backend and outcome, nest under the
// caller's trace, and carry no argument, token, session id or secret.
//
// Every identifier here starts with "tr".

package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpgate/mcpgate/internal/otlptest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

const (
	trCallerTrace = "0af7651916cd43dd8448eb211c80319c"
	trCallerSpan  = "b7ad6b7169203331"
	trTraceparent = "00-" + trCallerTrace + "-" + trCallerSpan + "-01"
)

// trFind returns the one span named name of kind, failing otherwise.
func trFind(t *testing.T, spans []otlptest.Span, name string, server bool) otlptest.Span {
	t.Helper()
	var found []otlptest.Span
	for _, s := range spans {
		if s.Name == name && (s.Kind == tracepb.Span_SPAN_KIND_SERVER) == server {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q (server %v), want 1; all: %+v", len(found), name, server, spans)
	}
	return found[0]
}

// trWantAttrs fails unless s has each attribute with the value given.
func trWantAttrs(t *testing.T, s otlptest.Span, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if s.Attrs[k] != v {
			t.Errorf("span %q: %s = %v (%T), want %v", s.Name, k, s.Attrs[k], s.Attrs[k], v)
		}
	}
}

// A relayed tools/call makes a server span under the caller's trace and a
// client span under it for the call to the backend; a native call, an
// unknown tool and a refusal have their server spans; nothing a caller or
// the configuration holds as a secret reaches the collector.
func TestTracingSpansForCallsThroughTheGateway(t *testing.T) {
	const (
		argSecret     = "arg-value-sk-live-77e1"
		backendSecret = "tr-backend-header-2b8d"
		otlpSecret    = "tr-otlp-token-c41f"
		unknownTool   = "no_such_tool_91aa"
	)
	rcv := otlptest.Start(t)
	t.Setenv("TR_BACKEND_TOKEN", backendSecret)
	t.Setenv("TR_OTLP_TOKEN", otlpSecret)
	url, _ := bkFixtureHTTP(t, nil)
	e := gwStart(t, fmt.Sprintf(`backends:
  - {name: fx, kind: http, url: %q, headers_from: {Authorization: TR_BACKEND_TOKEN}}
tracing:
  otlp_endpoint: %q
  service_name: gateway-under-test
  headers_from: {Authorization: TR_OTLP_TOKEN}
`, url, rcv.URL()))
	bkRun(t, e.gw)
	admin, _ := e.token("root", "admin")
	viewer, _ := e.token("alice", "viewer")
	ctx := testkit.Context(t)

	conn, err := mcphttp.DialStreamable(ctx, e.base+"/mcp", mcphttp.ClientOptions{HTTPClient: e.client,
		Header: http.Header{"Authorization": {gwBearer(admin)}, "Traceparent": {trTraceparent}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.connect(conn)
	if err != nil {
		t.Fatal(err)
	}
	sessionID := conn.SessionID()
	const relayed = "fx__json_schema_2020_12_tool"
	trWaitTool(t, c, relayed)
	if _, err := gwCallTool(ctx, c, relayed, map[string]any{"name": argSecret}); err != nil {
		t.Fatalf("relayed call: %v", err)
	}
	if _, err := gwCallTool(ctx, c, gwToolEcho, map[string]any{"text": argSecret}); err != nil {
		t.Fatalf("native call: %v", err)
	}
	if _, err := gwCallTool(ctx, c, unknownTool, map[string]any{"text": argSecret}); err == nil {
		t.Fatal("unknown tool: no error")
	}
	vc := e.dial(gwStreamable, gwBearer(viewer))
	if _, err := gwCallTool(ctx, vc, gwToolAdmin, nil); err == nil {
		t.Fatal("admin tool as viewer: no error")
	}
	_ = c.Close()
	_ = vc.Close()
	// Close flushes the spans still queued.
	if err := e.closeGateway(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	spans := rcv.Spans()

	call := trFind(t, spans, "tools/call "+relayed, true)
	trWantAttrs(t, call, map[string]any{
		"mcp.method.name": "tools/call", "mcpgate.entry": relayed, "mcpgate.entry.kind": "tool",
		"gen_ai.tool.name": relayed, "mcpgate.backend": "fx", "mcpgate.outcome": "ok", "mcpgate.role": "admin",
	})
	if call.Service != "gateway-under-test" {
		t.Errorf("service.name %q", call.Service)
	}
	if call.TraceID != trCallerTrace || call.ParentSpanID != trCallerSpan {
		t.Errorf("server span in trace %s under %s, want the caller's %s under %s", call.TraceID, call.ParentSpanID, trCallerTrace, trCallerSpan)
	}
	// Under the server span: the gate's decision, then the call to the
	// backend with how it is reached and the revision spoken.
	var gate, upstream []otlptest.Span
	for _, s := range spans {
		switch {
		case s.ParentSpanID != call.SpanID:
		case s.Name == "gate":
			gate = append(gate, s)
		default:
			upstream = append(upstream, s)
		}
	}
	if len(gate) != 1 || gate[0].Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Fatalf("gate spans under the relayed call: %+v, want one", gate)
	}
	trWantAttrs(t, gate[0], map[string]any{"mcpgate.gate.decision": "allow", "mcpgate.entry": relayed})
	if len(upstream) != 1 || upstream[0].Name != "tools/call" || upstream[0].Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Fatalf("spans under the relayed call: %+v, want one client span tools/call", upstream)
	}
	trWantAttrs(t, upstream[0], map[string]any{"mcp.method.name": "tools/call", "mcpgate.backend": "fx",
		"mcpgate.backend.kind": "http", "network.transport": "tcp", "mcpgate.era": "2025", "mcp.protocol.version": mcp.Version20251125})

	native := trFind(t, spans, "tools/call "+gwToolEcho, true)
	trWantAttrs(t, native, map[string]any{"mcpgate.entry": gwToolEcho, "mcpgate.outcome": "ok"})
	if _, has := native.Attrs["mcpgate.backend"]; has {
		t.Errorf("native call has a backend: %+v", native.Attrs)
	}
	var unknown []otlptest.Span
	for _, s := range spans {
		if s.Name == "tools/call" && s.Kind == tracepb.Span_SPAN_KIND_SERVER {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) != 1 {
		t.Fatalf("%d server spans named plain tools/call, want the unknown tool's only", len(unknown))
	}
	trWantAttrs(t, unknown[0], map[string]any{"mcpgate.outcome": "invalid", "rpc.jsonrpc.error_code": int64(-32602)})
	if _, has := unknown[0].Attrs["mcpgate.entry"]; has {
		t.Errorf("an unknown tool's span names an entry: %+v", unknown[0].Attrs)
	}
	refused := trFind(t, spans, "tools/call "+gwToolAdmin, true)
	trWantAttrs(t, refused, map[string]any{"mcpgate.outcome": "forbidden", "rpc.jsonrpc.error_code": int64(-32001), "mcpgate.role": "viewer"})
	denied := 0
	for _, s := range spans {
		if s.Name == "gate" && s.ParentSpanID == refused.SpanID {
			denied++
			trWantAttrs(t, s, map[string]any{"mcpgate.gate.decision": "deny", "rpc.jsonrpc.error_code": int64(-32001)})
		}
	}
	if denied != 1 {
		t.Errorf("%d gate spans under the refused call, want one that denies", denied)
	}
	if refused.TraceID == trCallerTrace {
		t.Error("a request without traceparent joined the caller's trace")
	}
	var inits []otlptest.Span
	for _, s := range spans {
		if s.Name == "initialize" && s.TraceID == trCallerTrace {
			inits = append(inits, s)
		}
	}
	if len(inits) != 1 {
		t.Errorf("%d initialize spans in the caller's trace, want 1", len(inits))
	}

	if h := rcv.Headers()[0].Get("Authorization"); h != otlpSecret {
		t.Errorf("the collector got Authorization %q, want TR_OTLP_TOKEN's value", h)
	}
	raw := rcv.Raw()
	for _, leak := range []string{argSecret, unknownTool, admin, viewer, backendSecret, otlpSecret, sessionID} {
		if leak != "" && bytes.Contains(raw, []byte(leak)) {
			t.Errorf("the export contains %q", leak)
		}
	}
	if strings.Contains(string(e.logs.Bytes()), otlpSecret) {
		t.Error("the log shows the collector's token")
	}
}

// Without a tracing section, the standard OTEL_EXPORTER_OTLP_ENDPOINT
// turns traces on; tracing.disabled turns them off again.
func TestTracingFollowsTheStandardEnvironment(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL())
	t.Setenv("OTEL_SERVICE_NAME", "from-env")

	off := gwStart(t, "tracing: {disabled: true}\n")
	offAdmin, _ := off.token("root", "admin")
	off.dial(gwStreamable, gwBearer(offAdmin))
	if err := off.closeGateway(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	if n := rcv.Exports(); n != 0 {
		t.Fatalf("tracing.disabled: %d exports reached the collector", n)
	}

	e := gwStart(t, "")
	admin, _ := e.token("root", "admin")
	e.dial(gwStreamable, gwBearer(admin))
	if err := e.closeGateway(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	if s := trFind(t, rcv.Spans(), "initialize", true); s.Service != "from-env" {
		t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", s.Service)
	}
}

// trWaitTool lists tools until name is there (the backend is up).
func trWaitTool(t *testing.T, c *mcp.Client, name string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := gwCall(testkit.Context(t), c, "tools/list", map[string]any{})
		if err == nil && slices.Contains(gwNames(t, res, "tools", "name"), name) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tool %s never listed; last %s %v", name, res, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The collector's credential comes from the environment; one that is not
// there refuses the gateway, naming the key.
func TestTracingHeaderMissingFromTheEnvironmentRefusesNew(t *testing.T) {
	_, err := mtNew(testkit.Context(t), t, "tracing:\n  otlp_endpoint: \"http://127.0.0.1:4318\"\n  headers_from: {Authorization: TR_SURELY_UNSET_VAR}\n")
	if err == nil || !strings.Contains(err.Error(), "tracing.headers_from.Authorization") {
		t.Errorf("New = %v, want an error naming tracing.headers_from.Authorization", err)
	}
}

// Trace context in _meta (2026-07-28, SEP-414): a request's
// _meta.traceparent makes its server span the caller's child, with no
// header, and the backend gets the trace context of the gateway's client
// span in its request's _meta, in place of the caller's.
func TestTracingFollowsTraceContextInMeta(t *testing.T) {
	rcv := otlptest.Start(t)
	var seen atomic.Value
	back := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "tr-back", Version: "1"}})
	if err := back.AddTools(&mcp.Tool{Name: "traced", Handler: func(_ context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		meta, _ := jsonrpc.Lookup(r.Params, "_meta")
		tp, _ := jsonrpc.LookupString(meta, "traceparent")
		seen.Store(tp)
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}})
	}}); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(back, mcphttp.Options{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.CloseClientConnections(); ts.Close() })
	e := gwStart(t, fmt.Sprintf("backends:\n  - {name: tb, kind: http, url: %q}\ntracing: {otlp_endpoint: %q}\n", ts.URL, rcv.URL()))
	bkRun(t, e.gw)
	admin, _ := e.token("root", "admin")
	ctx := testkit.Context(t)
	c := e.dial(gwStreamable, gwBearer(admin))
	trWaitTool(t, c, "tb__traced")
	if _, err := gwCall(ctx, c, "tools/call", map[string]any{"name": "tb__traced", "arguments": map[string]any{},
		"_meta": map[string]any{"traceparent": trTraceparent}}); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if err := e.closeGateway(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	call := trFind(t, spans, "tools/call tb__traced", true)
	if call.TraceID != trCallerTrace || call.ParentSpanID != trCallerSpan {
		t.Errorf("server span in trace %s under %s, want the caller's %s under %s (from _meta)", call.TraceID, call.ParentSpanID, trCallerTrace, trCallerSpan)
	}
	var client otlptest.Span
	for _, s := range spans {
		if s.ParentSpanID == call.SpanID && s.Kind == tracepb.Span_SPAN_KIND_CLIENT {
			client = s
		}
	}
	got, _ := seen.Load().(string)
	if want := "00-" + trCallerTrace + "-" + client.SpanID + "-01"; client.SpanID == "" || got != want {
		t.Errorf("the backend got traceparent %q, want the gateway's client span %q", got, want)
	}
}
