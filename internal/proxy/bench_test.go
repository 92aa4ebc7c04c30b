// bench_test.go measures a tools/call through the proxy's framed form, the
// way the gateway makes it: a channel per call on the begun scope, a
// notification channel open beside it, the fixture as the MCP server over
// Streamable HTTP. "progress" is a call that sends three notifications
// before its result, so it pays for the order between them.

package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/wire"
)

func BenchmarkFramedToolsCall(b *testing.B) {
	for _, bc := range []struct{ name, params string }{
		{"simple", `{"name":"test_simple_text","arguments":{}}`},
		{"progress", `{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":1}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			scope := benchBegin(b, ctx)
			notes, err := scope.OpenChannel(ctx, wire.McpNotifications{}.Append(nil))
			if err != nil {
				b.Fatal(err)
			}
			drained := make(chan struct{})
			go func() { // a reader that keeps up, as the gateway's does
				defer close(drained)
				for {
					if _, err := notes.Next(ctx); err != nil {
						return
					}
				}
			}()
			defer func() { cancel(); <-drained }()
			req := wire.McpCallTool{Params: []byte(bc.params)}.Append(nil)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				ch, err := scope.OpenChannel(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				p, err := ch.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if resp, err := wire.DecodeResponse(p); err != nil || resp.Error != nil {
					b.Fatalf("answer %q: %v", p, err)
				}
				_, _ = ch.Next(ctx) // the finish
			}
		})
	}
}

// benchBegin serves the fixture behind a proxy and returns the begun scope
// of a framed connection to it; the benchmark's end stops everything.
func benchBegin(b *testing.B, ctx context.Context) *wire.Scope {
	h := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{})
	b.Cleanup(h.Close)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mcpSrv := httptest.NewServer(mux)
	b.Cleanup(mcpSrv.Close)
	up, err := NewUpstream(UpstreamConfig{Kind: upstream.KindHTTP, URL: mcpSrv.URL + "/mcp"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = up.Close() })
	proxySrv := httptest.NewServer(NewServer(Options{Upstream: up}))
	b.Cleanup(proxySrv.Close)
	cl, err := wire.Dial(ctx, "ws"+strings.TrimPrefix(proxySrv.URL, "http")+"/", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cl.Close() })
	scope, err := cl.Open(ctx, wire.BeginTools{Arguments: json.RawMessage("null")}.Append(nil))
	if err != nil {
		b.Fatal(err)
	}
	p, err := scope.Next(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if ans, err := wire.DecodeBeginAnswer(p); err != nil || !ans.Begun() {
		b.Fatalf("begin: %q, %v", p, err)
	}
	return scope
}
