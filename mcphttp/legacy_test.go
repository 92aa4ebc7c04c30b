// legacy_test.go pins the legacy HTTP+SSE server transport as the official
// Go SDK's SSE client sees it, and holds what the legacy and client tests
// share: the leak check, bounded contexts, a stand-in for authentication,
// and a small catalogue behind the legacy transport (legacyFixture).

package mcphttp

//lint:file-ignore SA1019 the official Go SDK is a test peer here: its sampling and logging, deprecated in 2026-07-28, are what these tests relay to 2025-era clients.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// withTestIdentity stands in for authentication: the X-Test-Identity
// header names the caller.
func withTestIdentity(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if who := r.Header.Get("X-Test-Identity"); who != "" {
			r = r.WithContext(mcp.WithIdentity(r.Context(), mcp.Identity{Subject: who}))
		}
		h.ServeHTTP(w, r)
	})
}

// rawFidelityResult is a tool result a relay must pass on byte for byte:
// pretty-printed, a number no float64 holds, _meta and an unknown field.
const rawFidelityResult = `{
  "content": [{"type": "text", "text": "x"}],
  "isError": false,
  "structuredContent": {"n": 123456789012345678901234567890},
  "_meta": {"k": 1},
  "unknownField": [1, 2]
}`

// legacyFixture is an mcp.Server with a small catalogue behind the legacy
// transport, on a loopback test server.
type legacyFixture struct {
	server    *mcp.Server
	handler   *SSEHandler
	http      *httptest.Server
	ended     chan string   // ids of sessions that ended
	started   chan struct{} // the "block" tool is running
	cancelled chan struct{} // the "block" tool saw its context end
}

func newLegacyFixture(t *testing.T, opts Options) *legacyFixture {
	t.Helper()
	f := &legacyFixture{
		server:    mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "mcpgate-test", Version: "0"}}),
		ended:     make(chan string, 16),
		started:   make(chan struct{}, 1),
		cancelled: make(chan struct{}, 1),
	}
	f.register(t)
	f.handler = NewSSEHandler(f.server, opts)
	f.handler.sessionEnded = func(id string) { f.ended <- id }
	mux := http.NewServeMux()
	mux.Handle("/sse", withTestIdentity(f.handler))
	mux.Handle("/messages", withTestIdentity(f.handler))
	f.http = httptest.NewServer(mux)
	t.Cleanup(f.http.Close)
	t.Cleanup(func() { _ = f.handler.Close() }) // before the server closes
	return f
}

func (f *legacyFixture) url(path string) string { return f.http.URL + path }

func textResult(text string) (json.RawMessage, error) {
	return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}})
}

func (f *legacyFixture) register(t *testing.T) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.server.AddTools(
		&mcp.Tool{
			Name:        "echo",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
				text, _ := jsonrpc.LookupString(args, "text")
				return textResult("echo: " + text)
			},
		},
		&mcp.Tool{Name: "progress", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			if err := r.Progress(ctx, 1, 2, "half way"); err != nil {
				return nil, err
			}
			if err := r.Log(ctx, mcp.LevelInfo, "progress-tool", "working"); err != nil {
				return nil, err
			}
			return textResult("done")
		}},
		&mcp.Tool{Name: "sample", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			res, err := r.Call(ctx, "sampling/createMessage", json.RawMessage(
				`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`))
			if err != nil {
				return nil, err
			}
			content, _ := jsonrpc.Lookup(res, "content")
			text, _ := jsonrpc.LookupString(content, "text")
			return textResult("sampled: " + text)
		}},
		&mcp.Tool{Name: "block", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			f.started <- struct{}{}
			<-ctx.Done()
			f.cancelled <- struct{}{}
			return nil, ctx.Err()
		}},
		&mcp.Tool{Name: "raw", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(rawFidelityResult), nil
		}},
	))
	must(f.server.AddResources(&mcp.Resource{URI: "mem://greeting", Name: "greeting",
		Read: func(_ context.Context, _ *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
			return mcp.Result(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "hello")}})
		}}))
	must(f.server.AddPrompts(&mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "name", Required: true}},
		Get: func(_ context.Context, _ *mcp.Request, args map[string]string) (json.RawMessage, error) {
			return mcp.Result(mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent("Hello, " + args["name"])}}})
		}}))
}

func firstText(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("result has no content: %+v", res)
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content[0] is %T, want text", res.Content[0])
	}
	return tc.Text
}

func TestLegacyServesSDKClient(t *testing.T) {
	testkit.LeakCheck(t)
	f := newLegacyFixture(t, Options{})
	ctx := testkit.Context(t)
	progress := make(chan *sdk.ProgressNotificationParams, 8)
	logs := make(chan *sdk.LoggingMessageParams, 8)
	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-client", Version: "1"}, &sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "from the client"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { progress <- r.Params },
		LoggingMessageHandler:       func(_ context.Context, r *sdk.LoggingMessageRequest) { logs <- r.Params },
	})
	cs, err := client.Connect(ctx, &sdk.SSEClientTransport{Endpoint: f.url("/sse"), HTTPClient: f.http.Client()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	t.Run("tools/list", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if got := strings.Join(names, ","); got != "echo,progress,sample,block,raw" {
			t.Errorf("tools = %s", got)
		}
	})
	t.Run("tools/call answers with content", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := firstText(t, res); got != "echo: hi" || res.IsError {
			t.Errorf("text = %q, isError = %v", got, res.IsError)
		}
	})
	t.Run("invalid arguments are -32602", func(t *testing.T) {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": 5}})
		var werr *sdkjsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("err = %v, want JSON-RPC -32602", err)
		}
	})
	t.Run("resources/read", func(t *testing.T) {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "mem://greeting"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 || res.Contents[0].Text != "hello" {
			t.Errorf("contents = %+v", res.Contents)
		}
	})
	t.Run("prompts/get", func(t *testing.T) {
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := res.Messages[0].Content.(*sdk.TextContent); !ok || tc.Text != "Hello, Ada" {
			t.Errorf("messages = %+v", res.Messages)
		}
	})
	t.Run("ping", func(t *testing.T) {
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("progress and log notifications", func(t *testing.T) {
		params := &sdk.CallToolParams{Name: "progress"}
		params.SetProgressToken("tok-1")
		if _, err := cs.CallTool(ctx, params); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-progress:
			if p.ProgressToken != "tok-1" || p.Progress != 1 || p.Total != 2 || p.Message != "half way" {
				t.Errorf("progress = %+v", p)
			}
		case <-ctx.Done():
			t.Fatal("no progress notification")
		}
		select {
		case l := <-logs:
			if l.Level != "info" || l.Logger != "progress-tool" || l.Data != "working" {
				t.Errorf("log = %+v", l)
			}
		case <-ctx.Done():
			t.Fatal("no log notification")
		}
	})
	t.Run("server-to-client sampling", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "sample"})
		if err != nil {
			t.Fatal(err)
		}
		if got := firstText(t, res); got != "sampled: from the client" {
			t.Errorf("text = %q", got)
		}
	})
}
