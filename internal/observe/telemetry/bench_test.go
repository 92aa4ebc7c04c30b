package telemetry_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/internal/observe/telemetry"
	"github.com/mcpgate/mcpgate/internal/otlptest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// BenchmarkServerSpan measures what tracing adds to one gated call served
// by the engine: nothing installed (tracing off), a span not sampled
// (sample_ratio 0), and a span recorded and exported in batches to a
// collector on loopback.
func BenchmarkServerSpan(b *testing.B) {
	run := func(b *testing.B, observers ...mcp.Observer) {
		s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "bench", Version: "1"}, Observers: observers})
		if err := s.AddTools(&mcp.Tool{Name: "echo", Owner: "fx", SkipValidation: true,
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"content":[]}`), nil
			}}); err != nil {
			b.Fatal(err)
		}
		ss := s.NewSession(mcp.SessionOptions{ID: "bench", Version: mcp.LatestVersion})
		defer ss.Close()
		m, err := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if out := ss.Handle(ctx, m, nil); out == nil {
				b.Fatal("no answer")
			}
		}
	}
	b.Run("off", func(b *testing.B) { run(b) })
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
			run(b, tr.Observer())
		})
	}
}
