// gosdk_backend_test.go puts the official Go SDK (v1.8.0), serving
// 2026-07-28 in its stateless mode, behind the gateway, and calls it with
// the official TypeScript SDK as a 2025-era client and with a 2026-07-28
// client: the gateway speaks each side's era, and the SDK's multi
// round-trip tool — it asks for the user's name in an InputRequiredResult
// — reaches the 2025 client as an elicitation on its session, and the
// 2026-07-28 client as the result, with the SDK's requestState sealed.

package gateway_test

//lint:file-ignore SA1019 the official Go SDK is a test peer here: its sampling and logging, deprecated in 2026-07-28, are what these tests relay to 2025-era clients.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// gosdkStateless serves a Go SDK server in stateless mode: hello answers
// at once; greet asks for a name first (the SDK's own MRTR example shape),
// carrying its step in requestState.
func gosdkStateless(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-stateless", Version: "1.8.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "hello", Description: "says hello"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello from the Go SDK"}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "greet", Description: "asks for a name, then greets"}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["user_name"].(*sdk.ElicitResult); ok && req.Params.RequestState == "step=1" {
			name, _ := r.Content["name"].(string)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Hello " + name}}}, nil, nil
		}
		return &sdk.CallToolResult{
			InputRequests: sdk.InputRequestMap{"user_name": &sdk.ElicitParams{Message: "What's your name?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}},
			RequestState: "step=1",
		}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL
}

type tsCallResult struct {
	ProtocolVersion string                     `json:"protocolVersion"`
	Tools           []string                   `json:"tools"`
	Calls           map[string]json.RawMessage `json:"calls"`
	Elicited        int                        `json:"elicited"`
}

func runTSCall(t *testing.T, url string, tools ...string) tsCallResult {
	t.Helper()
	p := peers.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script, _ := filepath.Abs("testdata/ts_call.cjs")
	cmd := exec.CommandContext(ctx, p.Node22, append([]string{script, url}, tools...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(p.Dir, "node_modules"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var r tsCallResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("TypeScript client output: %v\n%s", err, out)
	}
	return r
}

func TestTheGoSDKStatelessBehindTheGatewayServesBothEras(t *testing.T) {
	testkit.LeakCheck(t)
	base, _ := bkGateway(t, "http: {sessionless: true}\nbackends:\n  - {name: gosdk, kind: http, url: \""+gosdkStateless(t)+"\"}\n")
	bkWaitReady(t, base, http.StatusOK)

	t.Run("a 2025 client on the TypeScript SDK", func(t *testing.T) {
		r := runTSCall(t, base+"/mcp", "gosdk__hello", "gosdk__greet")
		if r.ProtocolVersion != mcp.Version20251125 {
			t.Errorf("the TypeScript client spoke %q to the gateway, want %s", r.ProtocolVersion, mcp.Version20251125)
		}
		if !strings.Contains(strings.Join(r.Tools, ","), "gosdk__greet") {
			t.Errorf("tools %v", r.Tools)
		}
		if !strings.Contains(string(r.Calls["gosdk__hello"]), "hello from the Go SDK") {
			t.Errorf("hello: %s", r.Calls["gosdk__hello"])
		}
		if !strings.Contains(string(r.Calls["gosdk__greet"]), "Hello Ada") || r.Elicited != 1 {
			t.Errorf("greet: %s, elicited %d times; want Hello Ada after one elicitation on the session", r.Calls["gosdk__greet"], r.Elicited)
		}
	})

	t.Run("a 2026-07-28 client", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		conn, err := mcphttp.DialStreamable(ctx, base+"/mcp", mcphttp.ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "modern", Version: "1"}, Capabilities: json.RawMessage(`{"elicitation":{}}`)})
		defer c.Close()
		if era, err := c.Connect(ctx, mcp.EraAuto); err != nil || era != mcp.EraSessionless {
			t.Fatalf("Connect to the gateway: %q %v", era, err)
		}
		res, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"gosdk__greet","arguments":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		reqs, state := mcptest.InputRequired(t, &jsonrpc.Message{ID: jsonrpc.ID("1"), Result: res})
		if in, ok := reqs["user_name"]; !ok || in.Method != "elicitation/create" {
			t.Fatalf("input requests %v, want the SDK's user_name elicitation", reqs)
		}
		if state == "" || strings.Contains(state, "step=1") {
			t.Fatalf("requestState %q: want the SDK's own sealed by the gateway", state)
		}
		res, err = c.Call(ctx, "tools/call", json.RawMessage(`{"name":"gosdk__greet","arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Grace"}}},"requestState":"`+state+`"}`))
		if err != nil || !strings.Contains(string(res), "Hello Grace") {
			t.Fatalf("the retry: %s %v, want Hello Grace", res, err)
		}
	})
}

// The Go SDK's client (v1.8.0), which chooses 2026-07-28 where it is
// served, through the gateway in front of the fixture as a 2025 backend
// and as a backend of the revision: it negotiates the revision with the
// gateway, calls, gets progress, and is asked for sampling (in the result,
// multi round-trip) either way.
func TestTheGoSDKClientThroughTheGatewaySpeaks2026ToBackendsOfEitherEra(t *testing.T) {
	testkit.LeakCheck(t)
	legacy, _ := bkFixtureHTTP(t, nil)
	modern, _, _ := slFixtureHTTP(t)
	for name, url := range map[string]string{"a 2025 backend": legacy, "a 2026-07-28 backend": modern} {
		t.Run(name, func(t *testing.T) {
			base, _ := bkGateway(t, "backends:\n  - {name: fx, kind: http, url: \""+url+"\", prefix: \"-\"}\n")
			bkWaitReady(t, base, http.StatusOK)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			progress := make(chan float64, 8)
			client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk", Version: "1.8.0"}, &sdk.ClientOptions{
				CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
					return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "from the Go SDK"}}, nil
				},
				ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { progress <- r.Params.Progress },
			})
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != mcp.Version20260728 {
				t.Errorf("the Go SDK negotiated %q with the gateway, want %s", v, mcp.Version20260728)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_simple_text"})
			if err != nil || len(res.Content) == 0 {
				t.Fatalf("test_simple_text: %+v %v", res, err)
			}
			params := &sdk.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}}
			params.SetProgressToken("p")
			if _, err := cs.CallTool(ctx, params); err != nil {
				t.Fatalf("test_tool_with_progress: %v", err)
			}
			select {
			case <-progress:
			case <-ctx.Done():
				t.Fatal("no progress reached the Go SDK")
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "hi"}})
			if err != nil {
				t.Fatalf("test_sampling: %v", err)
			}
			if tc, ok := res.Content[0].(*sdk.TextContent); !ok || !strings.Contains(tc.Text, "from the Go SDK") {
				t.Errorf("test_sampling: %+v, want the SDK's sampled answer", res.Content)
			}
		})
	}
}
