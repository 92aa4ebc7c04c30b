package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// greeter is a server with one tool.
func greeter() *mcp.Server {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "greeter", Version: "1"}})
	err := s.AddTools(&mcp.Tool{
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
	return s
}

// serve hands one request to s, as a transport does, and prints the answer.
func serve(s *mcp.Server, request string) {
	m, err := jsonrpc.Parse([]byte(request))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(s.ServeStateless(context.Background(), m, "2025-11-25", nil)))
}

// A server with one tool, asked to call it twice: the second call's
// arguments break the tool's input schema, and the engine refuses them
// with -32602 before the handler runs. The transports (mcphttp, stdio,
// wiremcp) do what serve does here: parse a message, hand it to the
// server, write the answer back.
func Example() {
	s := greeter()
	serve(s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`)
	serve(s, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{}}}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid arguments for tool greet","data":{"tool":"greet","violations":[{"path":"","reason":"missing property 'name'"}]}}}
}

// Middleware wraps every request the engine serves, like net/http's: here
// it counts the calls by method.
func ExampleServer_Use() {
	s := greeter()
	counts := map[string]int{}
	s.Use(func(next mcp.Handler) mcp.Handler {
		return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
			counts[r.Method]++
			return next.ServeMCP(ctx, r)
		})
	})
	serve(s, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	serve(s, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`)
	fmt.Println(counts["tools/list"], counts["tools/call"])
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"greet","description":"Greets someone by name.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}]}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}
	// 1 1
}

// hideGreet is a Gate that hides the greet tool and refuses its calls.
type hideGreet struct{}

func (hideGreet) Visible(_ context.Context, e mcp.Entry) bool { return e.Name != "greet" }

func (hideGreet) Admit(_ context.Context, e mcp.Entry) error {
	if e.Name == "greet" {
		return jsonrpc.NewError(jsonrpc.CodeForbidden, "forbidden: greet", map[string]mcp.ErrorKind{"kind": mcp.KindForbidden})
	}
	return nil
}

// A Gate decides what a caller sees in the lists and what it may call:
// the engine asks it before every tools/call, resources/read and
// prompts/get, and filters every list by it.
func ExampleGate() {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "gated", Version: "1"}, Gate: hideGreet{}})
	_ = s.AddTools(greeterTool())
	serve(s, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	serve(s, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"forbidden: greet","data":{"kind":"forbidden"}}}
}

func greeterTool() *mcp.Tool {
	return &mcp.Tool{Name: "greet", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("hello")}})
	}}
}
