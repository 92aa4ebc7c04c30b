package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// generatedServer is an MCP server of n tools, tool_00000 …, each with a
// description and a small schema, answering a fixed text.
func generatedServer(tb testing.TB, n int) *mcp.Server {
	s := mcp.NewServer(mcp.Options{})
	tools := make([]*mcp.Tool, n)
	for i := range n {
		tools[i] = &mcp.Tool{Name: fmt.Sprintf("tool_%05d", i),
			Description: fmt.Sprintf("Runs step %d on the items of a collection and returns what changed.", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"collection":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1}}}`),
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("done")}})
			}}
	}
	if err := s.AddTools(tools...); err != nil {
		tb.Fatal(err)
	}
	return s
}

// catalogueFront is a client of a gateway in front of n generated tools,
// and the call of the last of them.
func catalogueFront(tb testing.TB, n int) (*mcp.Client, json.RawMessage) {
	last := fmt.Sprintf("tool_%05d", n-1)
	c := frontClient(tb, httpBackend(tb, generatedServer(tb, n)), mcp.EraSession, last)
	return c, json.RawMessage(`{"name":` + strconv.Quote(last) + `,"arguments":{}}`)
}

// The cost of one call does not grow with the catalogue: a call through a
// gateway in front of 10,000 tools allocates what one in front of 10
// does. (The time is the benchmark's, below: no test asserts a time.)
func TestACallCostsTheSameInFrontOf10OrOf10000Tools(t *testing.T) {
	if testing.Short() {
		t.Skip("lists 10,000 tools")
	}
	if testkit.Race {
		t.Skip("the race detector allocates on its own account")
	}
	ctx := testkit.Context(t)
	allocs := map[int]float64{}
	for _, n := range []int{10, 10000} {
		c, params := catalogueFront(t, n)
		allocs[n] = testing.AllocsPerRun(300, func() {
			if _, err := c.Call(ctx, "tools/call", params); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("allocations per call: %v", allocs)
	if allocs[10000] > allocs[10] {
		t.Fatalf("a call in front of 10,000 tools allocates %.0f times, in front of 10 %.0f: the catalogue's size shows in every call", allocs[10000], allocs[10])
	}
}

// BenchmarkCatalogueSize times a relayed call in front of 10 and of
// 10,000 tools, and the whole tools/list of the large catalogue, page by
// page as a client reads it (list-ms per listing, pages per listing):
//
//	go test -run '^$' -bench CatalogueSize -benchmem ./internal/gateway
func BenchmarkCatalogueSize(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("call/tools=%d", n), func(b *testing.B) {
			c, params := catalogueFront(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Call(ctx, "tools/call", params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("list/tools=10000", func(b *testing.B) {
		c, _ := catalogueFront(b, 10000)
		b.ReportAllocs()
		var pages, tools int
		start := time.Now()
		for b.Loop() {
			pages, tools = 0, 0
			var cursor string
			for {
				params := json.RawMessage(`{}`)
				if cursor != "" {
					params = json.RawMessage(`{"cursor":` + strconv.Quote(cursor) + `}`)
				}
				res, err := c.Call(ctx, "tools/list", params)
				if err != nil {
					b.Fatal(err)
				}
				var page struct {
					Tools []json.RawMessage `json:"tools"`
				}
				if err := json.Unmarshal(res, &page); err != nil {
					b.Fatal(err)
				}
				pages, tools = pages+1, tools+len(page.Tools)
				cursor, _ = jsonrpc.LookupString(res, "nextCursor")
				if cursor == "" {
					break
				}
			}
		}
		if tools != 10000 {
			b.Fatalf("listed %d tools, want 10000", tools)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "list-ms")
		b.ReportMetric(float64(pages), "pages")
	})
}
