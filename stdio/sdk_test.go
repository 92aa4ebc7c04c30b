// sdk_test.go drives the server end with the official Go SDK's client over
// its own CommandTransport: a real peer, a real child process, real pipes.

package stdio

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	sdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/mcp"
)

func connectSDK(t *testing.T, ctx context.Context, opts *sdk.ClientSessionOptions) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = childCommandEnv()
	cmd.Stderr = os.Stderr
	transport := &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, transport, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return cs
}

func TestSDKClientAgainstServe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cs := connectSDK(t, ctx, nil)

	t.Run("initialize negotiates a revision both speak", func(t *testing.T) {
		res := cs.InitializeResult()
		if res.ServerInfo == nil || res.ServerInfo.Name != "test-server" {
			t.Errorf("server info %+v", res.ServerInfo)
		}
		if res.ProtocolVersion != mcp.Version20251125 {
			t.Errorf("protocol version %q", res.ProtocolVersion)
		}
		if res.Capabilities == nil || res.Capabilities.Tools == nil {
			t.Errorf("capabilities %+v", res.Capabilities)
		}
	})
	t.Run("tools/list", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if !slices.Equal(names, []string{"echo", "wait", "ask", "count", "pretty"}) {
			t.Errorf("tools %v", names)
		}
	})
	t.Run("tools/call answers content", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || len(res.Content) != 1 {
			t.Fatalf("result %+v", res)
		}
		if text, ok := res.Content[0].(*sdk.TextContent); !ok || text.Text != "hi" {
			t.Errorf("content %#v", res.Content[0])
		}
	})
	t.Run("tools/call with invalid arguments is -32602", func(t *testing.T) {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": 5}})
		var werr *sdkjsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != sdkjsonrpc.CodeInvalidParams {
			t.Fatalf("err = %v, want JSON-RPC -32602", err)
		}
	})
	t.Run("resources/read", func(t *testing.T) {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://greeting"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 || res.Contents[0].Text != "hello" {
			t.Errorf("contents %+v", res.Contents)
		}
	})
	t.Run("prompts/get", func(t *testing.T) {
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) != 1 {
			t.Fatalf("messages %+v", res.Messages)
		}
		if text, ok := res.Messages[0].Content.(*sdk.TextContent); !ok || text.Text != "Hello, Ada" {
			t.Errorf("content %#v", res.Messages[0].Content)
		}
	})
	t.Run("ping", func(t *testing.T) {
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSDKClientAtOlderRevision(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cs := connectSDK(t, ctx, &sdk.ClientSessionOptions{ProtocolVersion: mcp.Version20250326})
	if v := cs.InitializeResult().ProtocolVersion; v != mcp.Version20250326 {
		t.Fatalf("protocol version %q", v)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "old"}}); err != nil {
		t.Fatal(err)
	}
}
