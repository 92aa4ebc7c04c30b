// testserver_test.go is the small MCP server every test talks to, in
// process or as a child: an echo tool with a schema, tools that block,
// ask the client for sampling, report progress or return pretty-printed
// raw JSON, plus a resource and a prompt.

package stdio

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpgate/mcpgate/mcp"
)

// prettyResult is a relayed-looking result: line breaks (LF and CRLF) as
// JSON whitespace, an escaped newline inside a string, a number no float64
// holds, digits a re-encoder would rewrite, and a field nobody declared.
const prettyResult = "{\n  \"content\": [\n    {\n      \"type\": \"text\",\n      \"text\": \"line one\\nline two\"\n    }\n  ],\r\n" +
	"  \"structuredContent\": {\n    \"big\": 123456789012345678901234567890,\n" +
	"    \"unknownField\": {\"keep\": [1, 2.50, -0e+3]}\n  }\n}\n"

const bigInteger = "123456789012345678901234567890"

// latches let a test hold a tool call open until it chooses to end it.
type latches struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (l *latches) get(key string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]chan struct{}{}
	}
	ch, ok := l.m[key]
	if !ok {
		ch = make(chan struct{})
		l.m[key] = ch
	}
	return ch
}

// open releases the calls waiting on key (once).
func (l *latches) open(key string) {
	ch := l.get(key)
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func newTestServer() (*mcp.Server, *latches) {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "test-server", Version: "1.0.0"}})
	l := &latches{}
	must(s.AddTools(
		&mcp.Tool{
			Name:        "echo",
			Description: "Echoes text.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
				var a struct{ Text string }
				if err := json.Unmarshal(args, &a); err != nil {
					return nil, err
				}
				return textResult(a.Text)
			},
		},
		&mcp.Tool{Name: "wait", Description: "Waits until its key is released.", Handler: l.waitTool},
		&mcp.Tool{Name: "ask", Description: "Asks the client for a sampling and releases a key.", Handler: l.askTool},
		&mcp.Tool{Name: "count", Description: "Reports n steps of progress.", Handler: countTool},
		&mcp.Tool{Name: "pretty", Description: "Returns pretty-printed raw JSON.",
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(prettyResult), nil
			}},
	))
	must(s.AddResources(&mcp.Resource{URI: "test://greeting", Name: "greeting", MimeType: "text/plain",
		Read: func(_ context.Context, _ *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
			return mcp.Result(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "hello")}})
		}}))
	must(s.AddPrompts(&mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "name", Required: true}},
		Get: func(_ context.Context, _ *mcp.Request, args map[string]string) (json.RawMessage, error) {
			return mcp.Result(mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent("Hello, " + args["name"])},
			}})
		}}))
	return s, l
}

// waitTool reports progress once it is running, then waits for its key.
func (l *latches) waitTool(ctx context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
	var a struct{ Key string }
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	if err := r.Progress(ctx, 0, 1, "waiting for "+a.Key); err != nil {
		return nil, err
	}
	select {
	case <-l.get(a.Key):
		return textResult("released " + a.Key)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// askTool asks the client to sample, then releases its key.
func (l *latches) askTool(ctx context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
	var a struct{ Key string }
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	raw, err := r.Call(ctx, "sampling/createMessage", map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": "answer?"}}},
		"maxTokens": 10,
	})
	if err != nil {
		return nil, err
	}
	var res struct{ Content struct{ Text string } }
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	if a.Key != "" {
		l.open(a.Key)
	}
	return textResult("sampled: " + res.Content.Text)
}

func countTool(ctx context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
	var a struct{ N int }
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	for i := 1; i <= a.N; i++ {
		if err := r.Progress(ctx, float64(i), float64(a.N), ""); err != nil {
			return nil, err
		}
	}
	return textResult(fmt.Sprintf("counted %d", a.N))
}

func textResult(text string) (json.RawMessage, error) {
	return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}})
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
