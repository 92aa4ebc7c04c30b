// streamable_sdk_test.go drives the Streamable HTTP server transport with
// real clients over a socket: seed 004's tools/call exchange, logged as a
// transcript, and the official Go SDK's Streamable HTTP client against the
// conformance fixture.

package mcphttp

//lint:file-ignore SA1019 the official Go SDK is a test peer here: its sampling and logging, deprecated in 2026-07-28, are what these tests relay to 2025-era clients.

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	sdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// TestTranscriptToolsCall is seed 004's deliverable over a real socket:
// one tools/call with invalid arguments gets JSON-RPC -32602, one valid
// call gets result.content. The exchange is logged as a transcript.
func TestTranscriptToolsCall(t *testing.T) {
	testkit.LeakCheck(t)
	e := newStEnv(t, fixture.New(fixture.Options{}), Options{})
	var sid string
	exchange := func(body string) *jsonrpc.Message {
		t.Helper()
		hdr := stHeaders(sid)
		if sid != "" {
			hdr.Set(HeaderProtocolVersion, mcp.Version20251125)
		}
		r := e.do(http.MethodPost, hdr, body)
		t.Logf("--> POST /mcp %s", body)
		t.Logf("<-- %d %s %s", r.status, r.header.Get("Content-Type"), bytes.TrimSpace(r.body))
		if sid == "" {
			sid = r.header.Get(HeaderSessionID)
		}
		if len(r.body) == 0 {
			return nil
		}
		return stMessage(t, r.body)
	}
	exchange(stInitBody(mcp.Version20251125))
	exchange(stInitialized)

	bad := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{}}}`)
	if code := stErrorCode(t, bad); code != jsonrpc.CodeInvalidParams || string(bad.ID) != "2" {
		t.Fatalf("invalid arguments: code %d id %s, want -32602 for id 2", code, bad.ID)
	}
	data, _ := jsonrpc.Lookup(bad.Error, "data")
	if !bytes.Contains(data, []byte("prompt")) {
		t.Errorf("error data %s does not name the missing argument", data)
	}
	good := exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_simple_text"}}`)
	if good.Error != nil || string(good.ID) != "3" {
		t.Fatalf("valid call answered %s", good.Error)
	}
	if got := stText(t, good); got != "This is a simple text response for testing." {
		t.Errorf("result.content[0].text = %q", got)
	}
}

// stSDKSession connects the official Go SDK's Streamable HTTP client to e.
func stSDKSession(t *testing.T, ctx context.Context, e *stEnv, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk", Version: "1.8.0"}, opts)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.url, HTTPClient: e.client}, nil)
	if err != nil {
		t.Fatalf("SDK connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// The official Go SDK's client in both eras: a 2025-11-25 session, and
// with the sessionless era served, 2026-07-28 — which it chooses, and in
// which sampling reaches it as a multi round-trip request (mrtr.go) and
// every other call works as before.
func TestStreamableSDKClient(t *testing.T) {
	for _, era := range []struct {
		name    string
		opts    Options
		version string
	}{{"2025-11-25 session", Options{}, mcp.Version20251125}, {"2026-07-28 sessionless", Options{Sessionless: true}, mcp.Version20260728}} {
		t.Run(era.name, func(t *testing.T) { stSDKClient(t, era.opts, era.version) })
	}
}

func stSDKClient(t *testing.T, opts Options, version string) {
	testkit.LeakCheck(t)
	e := newStEnv(t, fixture.New(fixture.Options{}), opts)
	ctx := testkit.Context(t)
	progress := make(chan *sdk.ProgressNotificationParams, 8)
	cs := stSDKSession(t, ctx, e, &sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Model: "test-model", Role: "assistant", StopReason: "endTurn",
				Content: &sdk.TextContent{Text: "This is a test response from the client"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { progress <- r.Params },
	})
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		t.Errorf("negotiated %q, want %s", v, version)
	}
	firstText := func(t *testing.T, res *sdk.CallToolResult) string {
		t.Helper()
		if len(res.Content) == 0 {
			t.Fatalf("no content: %+v", res)
		}
		tc, ok := res.Content[0].(*sdk.TextContent)
		if !ok {
			t.Fatalf("content[0] is %T", res.Content[0])
		}
		return tc.Text
	}

	t.Run("lists tools", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tool := range res.Tools {
			names[tool.Name] = true
		}
		for _, want := range []string{"test_simple_text", "test_tool_with_progress", "test_sampling", "json_schema_2020_12_tool"} {
			if !names[want] {
				t.Errorf("tools/list lacks %s", want)
			}
		}
	})
	t.Run("calls test_simple_text", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_simple_text"})
		if err != nil {
			t.Fatal(err)
		}
		if got := firstText(t, res); got != "This is a simple text response for testing." || res.IsError {
			t.Errorf("text %q isError %v", got, res.IsError)
		}
	})
	t.Run("invalid arguments are -32602", func(t *testing.T) {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_sampling", Arguments: map[string]any{}})
		var werr *sdkjsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("err = %v, want JSON-RPC -32602", err)
		}
	})
	t.Run("progress arrives with the call", func(t *testing.T) {
		params := &sdk.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}}
		params.SetProgressToken("sdk-progress")
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if got := firstText(t, res); got != `"sdk-progress"` {
			t.Errorf("text = %q", got)
		}
		last := -1.0
		for i := range 3 {
			p := stReceive(t, ctx, progress, "progress notification")
			if p.ProgressToken != "sdk-progress" || p.Progress < last || p.Total != 100 {
				t.Errorf("progress %d = %+v", i, p)
			}
			last = p.Progress
		}
	})
	t.Run("sampling goes back to the client", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "Test prompt for sampling"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := firstText(t, res); got != "LLM response: This is a test response from the client" {
			t.Errorf("text = %q", got)
		}
	})
	t.Run("reads a resource and a template", func(t *testing.T) {
		for uri, want := range map[string]string{
			"test://static-text":       "This is the content of the static text resource.",
			"test://template/123/data": `"id":"123"`,
		} {
			res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatalf("%s: %v", uri, err)
			}
			if len(res.Contents) != 1 || res.Contents[0].URI != uri || !strings.Contains(res.Contents[0].Text, want) {
				t.Errorf("%s: contents = %+v", uri, res.Contents)
			}
		}
		tmpl, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "test://template/{id}/data" {
			t.Errorf("templates = %+v, %v", tmpl, err)
		}
	})
	t.Run("gets prompts", func(t *testing.T) {
		list, err := cs.ListPrompts(ctx, nil)
		if err != nil || len(list.Prompts) != 5 { // the four of 2025 and one asking for input (2026-07-28)
			t.Fatalf("prompts = %+v, %v", list, err)
		}
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "test_prompt_with_arguments",
			Arguments: map[string]string{"arg1": "testValue1", "arg2": "testValue2"}})
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := res.Messages[0].Content.(*sdk.TextContent); !ok ||
			tc.Text != "Prompt with arguments: arg1='testValue1', arg2='testValue2'" {
			t.Errorf("messages = %+v", res.Messages)
		}
	})
	t.Run("closing the client ends its session", func(t *testing.T) {
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "the session to end", func() bool { return e.h.Sessions() == 0 })
	})
}
