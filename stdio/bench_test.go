// bench_test.go measures what a stdio hop costs: one tools/call round trip
// from mcpgate's client through Serve and back, over in-process pipes.

package stdio

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// The 64k row echoes 64 KiB of text: a long answer's cost shows there.
func BenchmarkStdioToolsCall(b *testing.B) {
	b.Run("short", func(b *testing.B) { benchStdioCall(b, "hello") })
	b.Run("64k", func(b *testing.B) { benchStdioCall(b, strings.Repeat("lorem ipsum ", 64<<10/12)) })
}

func benchStdioCall(b *testing.B, text string) {
	s, _ := newTestServer()
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- Serve(context.Background(), s, toServerR, toClientW, Options{}) }()
	c := mcp.NewClient(NewConn(toClientR, toServerW), mcp.ClientOptions{})
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		b.Fatal(err)
	}
	params := json.RawMessage(`{"name":"echo","arguments":{"text":"` + text + `"}}`)

	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(ctx, "tools/call", params); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()

	_ = c.Close() // closes the server's stdin: Serve ends at EOF
	if err := <-served; err != nil {
		b.Fatal(err)
	}
	_ = toClientW.Close()
}
