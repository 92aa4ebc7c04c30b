package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/internal/otlptest"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/telemetry"
)

// BenchmarkServerSpan measures what the tracing middleware adds to one
// gated call: nothing installed (tracing off), a span not sampled
// (sample_ratio 0), and a span recorded and exported in batches to a
// collector on loopback.
func BenchmarkServerSpan(b *testing.B) {
	r := &mcp.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{}}`)}
	gate := func(tr *telemetry.Tracer) mcp.Handler {
		g := tr.EntryGate(nopGate{})
		return mcp.HandlerFunc(func(ctx context.Context, _ *mcp.Request) (json.RawMessage, error) {
			_ = g.Admit(ctx, mcp.Entry{Kind: mcp.KindTool, Name: "echo"})
			return json.RawMessage(`{"content":[]}`), nil
		})
	}
	run := func(b *testing.B, h mcp.Handler) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.ServeMCP(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("off", func(b *testing.B) {
		run(b, mcp.HandlerFunc(func(ctx context.Context, _ *mcp.Request) (json.RawMessage, error) {
			return json.RawMessage(`{"content":[]}`), nil
		}))
	})
	for _, c := range []struct {
		name  string
		ratio float64
	}{{"not-sampled", 0}, {"sampled", 1}} {
		b.Run(c.name, func(b *testing.B) {
			rcv := otlptest.Start(b)
			ratio := c.ratio
			tr, err := telemetry.New(context.Background(), telemetry.Options{Endpoint: rcv.URL(), SampleRatio: &ratio, Getenv: env()})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = tr.Shutdown(context.Background()) }()
			run(b, tr.Middleware(telemetry.MiddlewareOptions{Backend: func(*mcp.Request) string { return "fx" }})(gate(tr)))
		})
	}
}

type nopGate struct{}

func (nopGate) Visible(context.Context, mcp.Entry) bool { return true }
func (nopGate) Admit(context.Context, mcp.Entry) error  { return nil }
