// bench_test.go measures the framed form over loopback: one channel's
// round trip (request, one response, finish) alone, and with 64 in flight
// at once; and the decode of the payloads a relay handles most.

package wire_test

import (
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

// answerOnce serves scopes by staying open and channels with one response
// echoing the request.
func answerOnce(ctx context.Context, r *wire.Responder, p []byte) {
	if !r.IsChannel() {
		_ = r.Respond([]byte("begun"))
		<-ctx.Done()
		return
	}
	_ = r.Respond(p)
}

func benchScope(b *testing.B) (*wire.Scope, context.Context) {
	srv := startServer(b, wire.HandlerFunc(answerOnce))
	c := dialClient(b, srv.URL, nil)
	ctx := context.Background()
	scope, err := c.Open(ctx, []byte("begin"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := scope.Next(ctx); err != nil {
		b.Fatal(err)
	}
	return scope, ctx
}

var benchRequest = wire.McpCallTool{Params: []byte(`{"name":"echo","arguments":{"text":"hello, wire"}}`)}.Append(nil)

func roundTrip(b *testing.B, scope *wire.Scope, ctx context.Context) {
	ch, err := scope.OpenChannel(ctx, benchRequest)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ch.Next(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := ch.Next(ctx); err != io.EOF {
		b.Fatal(err)
	}
}

func BenchmarkChannelRoundTrip(b *testing.B) {
	scope, ctx := benchScope(b)
	b.ReportAllocs()
	for b.Loop() {
		roundTrip(b, scope, ctx)
	}
}

func BenchmarkChannelRoundTrip64Concurrent(b *testing.B) {
	scope, ctx := benchScope(b)
	b.ReportAllocs()
	b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			roundTrip(b, scope, ctx)
		}
	})
}

func BenchmarkDecodeCallTool(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodeChannelRequest(benchRequest); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeResponse(b *testing.B) {
	p := wire.Response{Result: []byte(`{"content":[{"type":"text","text":"hello, wire"}],` +
		`"structuredContent":{"n":123456789012345678901234567890}}`)}.Append(nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if _, err := wire.DecodeResponse(p); err != nil {
			b.Fatal(err)
		}
	}
}
