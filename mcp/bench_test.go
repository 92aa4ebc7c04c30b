// bench_test.go measures the engine's cost for one tools/call, as a
// transport pays it: parse the message, Handle it, get the answer bytes.

package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

var benchEcho = json.RawMessage(`{"content":[{"type":"text","text":"hello"}]}`)

func benchmarkToolsCall(b *testing.B, skipValidation bool) {
	srv := newServer(b, mcp.Options{})
	mustAdd(b, srv.AddTools(&mcp.Tool{
		Name:           "echo",
		InputSchema:    json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":100},"times":{"type":"integer","minimum":1}},"required":["text"],"additionalProperties":false}`),
		SkipValidation: skipValidation,
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return benchEcho, nil
		},
	}))
	ss, _ := readySession(b, srv)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello","times":2}}}`)
	ctx := context.Background()
	sink := newRecorder()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m, err := jsonrpc.Parse(msg)
		if err != nil {
			b.Fatal(err)
		}
		if answer := ss.Handle(ctx, m, sink); len(answer) == 0 {
			b.Fatal("no answer")
		}
	}
}

func BenchmarkHandleToolsCall(b *testing.B)             { benchmarkToolsCall(b, false) }
func BenchmarkHandleToolsCallNoValidation(b *testing.B) { benchmarkToolsCall(b, true) }
