package stdio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/stdio"
)

// A server answering one session on a pair of byte streams, as one a
// desktop client starts answers on its stdin and stdout, and a client on
// the other ends: newline-delimited JSON both ways.
func ExampleServe() {
	server := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "clock", Version: "1"}})
	if err := server.AddTools(&mcp.Tool{Name: "now", Description: "Says the time.",
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("noon")}})
		}}); err != nil {
		panic(err)
	}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- stdio.Serve(ctx, server, toServer, fromServer, stdio.Options{})
		_ = fromServer.Close()
	}()

	client := mcp.NewClient(stdio.NewConn(toClient, fromClient), mcp.ClientOptions{Info: mcp.Implementation{Name: "example", Version: "1"}})
	if _, err := client.Initialize(ctx); err != nil {
		panic(err)
	}
	res, err := client.Call(ctx, "tools/call", json.RawMessage(`{"name":"now"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res))
	_ = client.Close() // closes the client's end: the server's input ends
	cancel()
	<-served
	// Output:
	// {"content":[{"type":"text","text":"noon"}]}
}
