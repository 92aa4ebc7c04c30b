package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// An MCP server with one tool, served over Streamable HTTP, and a client
// that connects to it and calls the tool: the engine, its HTTP transport
// and its client, end to end on a loopback socket.
func Example() {
	server := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "greeter", Version: "1"}})
	err := server.AddTools(&mcp.Tool{
		Name:        "greet",
		Description: "Greets someone by name.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			var in struct{ Name string }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("Hello, " + in.Name + "!")}})
		},
	})
	if err != nil {
		panic(err)
	}
	handler := mcphttp.NewHandler(server, mcphttp.Options{})
	defer handler.Close()
	srv := httptest.NewServer(handler)
	defer srv.Close()

	ctx := context.Background()
	conn, err := mcphttp.DialStreamable(ctx, srv.URL, mcphttp.ClientOptions{})
	if err != nil {
		panic(err)
	}
	client := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "example", Version: "1"}})
	defer client.Close()
	if _, err := client.Initialize(ctx); err != nil {
		panic(err)
	}
	res, err := client.Call(ctx, "tools/call", json.RawMessage(`{"name":"greet","arguments":{"name":"Ada"}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res))
	// Output:
	// {"content":[{"type":"text","text":"Hello, Ada!"}]}
}
