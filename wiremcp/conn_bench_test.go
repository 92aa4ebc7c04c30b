// conn_bench_test.go measures a tools/call through a proxy connection
// as the backend's mcp.Client sees it (Write, then Read until the answer),
// the fixture behind a real proxy: "progress" sends three notifications
// before its result, which come out of Read first.

package wiremcp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/proxytest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/wiremcp"
)

func BenchmarkWireConnToolsCall(b *testing.B) {
	for _, bc := range []struct{ name, params string }{
		{"simple", `{"name":"test_simple_text","arguments":{}}`},
		{"progress", `{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":1}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			url := proxytest.For(b, fixture.New(fixture.Options{}))
			ctx := context.Background()
			c, err := wiremcp.Dial(ctx, url, wiremcp.DialOptions{Name: "be", Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			req := &jsonrpc.Message{ID: jsonrpc.ID("1"), Method: "tools/call", Params: json.RawMessage(bc.params)}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Write(ctx, req); err != nil {
					b.Fatal(err)
				}
				for {
					m, err := c.Read(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if m.Kind() != jsonrpc.KindNotification {
						break
					}
				}
			}
		})
	}
}
