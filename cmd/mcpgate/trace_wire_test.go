// trace_wire_test.go holds one relayed call to one trace across the
// wire, with the real programs: `mcpgate serve` in front of `mcpgate
// proxy` in front of the fixture, each exporting to one OTLP receiver.

package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpgate/mcpgate/internal/otlptest"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// The tree of one call: the gateway's server span; under it the gate
// (allow) and the client span to the backend, with its kind and era; and
// under that the proxy's own server span, exported by the proxy from the
// trace context the call carried in _meta.
func TestOneRelayedCallIsOneTraceAcrossTheWire(t *testing.T) {
	bin := testkit.Mcpgate(t)
	rcv := otlptest.Start(t)
	flushSoon := "OTEL_BSP_SCHEDULE_DELAY=50" // both programs export within 50 ms
	up := startFixture(t, bin) + "/mcp"
	px, _ := startProxy(t, bin, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL(), flushSoon},
		"--upstream", up, "--info", filepath.Join(t.TempDir(), "none.md"))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	writeText(t, cfg, fmt.Sprintf("listen: 127.0.0.1:0\nstore: %q\ntracing: {otlp_endpoint: %q}\nbackends:\n  - {name: px, kind: proxy, url: %q, prefix: \"-\"}\n",
		filepath.Join(dir, "mcpgate.db"), rcv.URL(), px))
	out, stderr, err := cliRun(t, bin, "token", "create", "--config", cfg, "--name", "tracer", "--role", "viewer")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, stderr)
	}
	token := strings.TrimSpace(out)
	srv := cliStartIn(t, "", append(cliEnv(t), flushSoon), bin, "serve", "--config", cfg)
	url := cliMCPURLRE.FindString(strings.Join(srv.waitLine(t, "the MCP URL", cliMCPURLRE.MatchString), "\n"))

	ctx := context.Background()
	r, err := rpc(ctx, url, token, "", replicaInit)
	if err != nil || r.session == "" {
		t.Fatalf("initialize: %v %d", err, r.status)
	}
	sid := r.session
	if r, err := rpc(ctx, url, token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || r.status != http.StatusAccepted {
		t.Fatalf("initialized: %v", err)
	}
	testkit.WaitFor(t, "the proxy's tool listed", func() bool {
		r, err := rpc(ctx, url, token, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		return err == nil && strings.Contains(string(r.msg["result"]), `"test_simple_text"`)
	})
	if !simpleTextAnswered(url, token, sid, 2) {
		t.Fatal("the relayed call was not answered")
	}

	var call, gate, client, proxied otlptest.Span
	rcv.WaitFor(t, "the call's four spans", func(spans []otlptest.Span) bool {
		for _, s := range spans {
			if s.Name == "tools/call test_simple_text" && s.Service == "mcpgate" {
				call = s
			}
		}
		for _, s := range spans {
			switch {
			case call.SpanID == "" || s.TraceID != call.TraceID:
			case s.Name == "gate" && s.ParentSpanID == call.SpanID:
				gate = s
			case s.Kind == tracepb.Span_SPAN_KIND_CLIENT && s.ParentSpanID == call.SpanID:
				client = s
			}
		}
		for _, s := range spans {
			if client.SpanID != "" && s.Service == "mcpgate-proxy" && s.ParentSpanID == client.SpanID && s.TraceID == call.TraceID {
				proxied = s
			}
		}
		return gate.SpanID != "" && proxied.SpanID != ""
	})
	if gate.Attrs["mcpgate.gate.decision"] != "allow" {
		t.Errorf("gate span %v, want allow", gate.Attrs)
	}
	if client.Attrs["mcpgate.backend"] != "px" || client.Attrs["mcpgate.backend.kind"] != "proxy" || client.Attrs["network.transport"] != "tcp" ||
		client.Attrs["mcpgate.era"] == nil {
		t.Errorf("client span %v, want the backend, its kind, transport and era", client.Attrs)
	}
	if proxied.Name != "tools/call test_simple_text" || proxied.Kind != tracepb.Span_SPAN_KIND_SERVER || proxied.Attrs["mcpgate.relay"] != "proxy" {
		t.Errorf("proxy span %s %v %v", proxied.Name, proxied.Kind, proxied.Attrs)
	}
}
