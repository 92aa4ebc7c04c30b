// bench_test.go measures the relay's own cost per call, in memory.

package catalogue_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// BenchmarkRelayedToolsCall measures one tools/call through a front
// server relaying to a backend over an in-memory connection: the relay's
// own cost (forward, in-flight registry), without sockets.
func BenchmarkRelayedToolsCall(b *testing.B) {
	b.Run("no call timeout", func(b *testing.B) { benchRelayed(b, catalogue.Options{}) })
	b.Run("call timeout", func(b *testing.B) { benchRelayed(b, catalogue.Options{CallTimeout: 5 * time.Minute}) })
}

func benchRelayed(b *testing.B, opts catalogue.Options) {
	f, _, _, _ := relayed(b, opts)
	benchCalls(b, f)
}

// benchCalls makes the benchmark's calls of b1__whoami on f.
func benchCalls(b *testing.B, f *front) {
	req := request(b, jsonrpc.ID("1"), "tools/call", `{"name":"b1__whoami","arguments":{}}`)
	sink := &mcptest.Recorder{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if ans := f.ss.Handle(ctx, req, sink); ans == nil {
			b.Fatal("no answer")
		}
	}
}

// BenchmarkRelayedToolsCallToASessionlessBackend is the same call, from a
// 2025 caller, to a backend spoken to in 2026-07-28: what the revision's
// _meta and the upstream leg cost the relay.
func BenchmarkRelayedToolsCallToASessionlessBackend(b *testing.B) {
	bs := newBackendServer(b, "b1", 0)
	f, _ := relayedSessionlessWith(b, bs.Server, "{}", catalogue.NewClaims())
	benchCalls(b, f)
}

// BenchmarkResyncUnchanged measures a sync of a backend of 1,000 tools,
// pinned, whose lists did not change: what every list_changed of another
// kind, and every reconnect, costs the relay.
func BenchmarkResyncUnchanged(b *testing.B) {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "big", Version: "1"}, PageSize: 1000})
	handler := func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) { return nil, nil }
	tools := make([]*mcp.Tool, 1000)
	for i := range tools {
		name := "tool_" + strconv.Itoa(i)
		tools[i] = &mcp.Tool{Name: name, Handler: handler, Definition: json.RawMessage(`{"name":"` + name +
			`","description":"Does thing number ` + strconv.Itoa(i) + ` of many, carefully.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"Where."},"depth":{"type":"integer","minimum":0}},"required":["path"]},"annotations":{"readOnlyHint":true}}`)}
	}
	if err := s.AddTools(tools...); err != nil {
		b.Fatal(err)
	}
	pin := func(_ context.Context, _ string, seen []catalogue.Listed) []catalogue.Verdict {
		return make([]catalogue.Verdict, len(seen))
	}
	f := newFront(b)
	m := catalogue.New("big", connect(b, s), catalogue.Options{Pin: pin})
	ctx := context.Background()
	if err := m.Sync(ctx, f.Server); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Sync(ctx, f.Server); err != nil {
			b.Fatal(err)
		}
	}
}
