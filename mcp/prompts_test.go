// prompts_test.go pins prompts/get (spec §5): an unknown prompt and a
// missing required argument are -32602, the latter naming what is missing.

package mcp_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestPromptsGet(t *testing.T) {
	var got map[string]string
	prompt := &mcp.Prompt{
		Name: "compare",
		Arguments: []mcp.PromptArgument{
			{Name: "before", Required: true},
			{Name: "after", Required: true},
			{Name: "style"},
		},
		Get: func(_ context.Context, _ *mcp.Request, args map[string]string) (json.RawMessage, error) {
			got = args
			return mcp.Result(mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent(args["before"])}}})
		},
	}
	tests := []struct {
		name        string
		params      string
		code        int64
		wantArgs    map[string]string
		wantMissing []string
	}{
		{"the handler gets the arguments", `{"name":"compare","arguments":{"before":"v1","after":"v2"}}`, 0,
			map[string]string{"before": "v1", "after": "v2"}, nil},
		{"optional arguments may be absent or present", `{"name":"compare","arguments":{"before":"v1","after":"v2","style":"terse"}}`, 0,
			map[string]string{"before": "v1", "after": "v2", "style": "terse"}, nil},
		{"an unknown prompt is -32602", `{"name":"nope"}`, jsonrpc.CodeInvalidParams, nil, nil},
		{"a missing required argument is -32602 with data.missing", `{"name":"compare","arguments":{"before":"v1"}}`,
			jsonrpc.CodeInvalidParams, nil, []string{"after"}},
		{"every missing required argument is listed", `{"name":"compare"}`,
			jsonrpc.CodeInvalidParams, nil, []string{"before", "after"}},
		{"null arguments miss every required one", `{"name":"compare","arguments":null}`,
			jsonrpc.CodeInvalidParams, nil, []string{"before", "after"}},
		{"arguments that are not strings are -32602", `{"name":"compare","arguments":{"before":1,"after":"x"}}`, jsonrpc.CodeInvalidParams, nil, nil},
		{"arguments that are not an object are -32602", `{"name":"compare","arguments":["v1"]}`, jsonrpc.CodeInvalidParams, nil, nil},
		{"a missing name is -32602", `{"arguments":{}}`, jsonrpc.CodeInvalidParams, nil, nil},
		{"a name that is not a string is -32602", `{"name":true}`, jsonrpc.CodeInvalidParams, nil, nil},
		{"params that are not an object are -32602", `["compare"]`, jsonrpc.CodeInvalidParams, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			srv := newServer(t, mcp.Options{})
			mustAdd(t, srv.AddPrompts(prompt))
			ss, _ := readySession(t, srv)
			m := call(t, ss, "prompts/get", tt.params)
			if tt.code == 0 {
				result(t, m)
				if !maps.Equal(got, tt.wantArgs) {
					t.Fatalf("handler got %v, want %v", got, tt.wantArgs)
				}
				return
			}
			e := rpcError(t, m, tt.code)
			if got != nil {
				t.Fatal("the handler ran")
			}
			if tt.wantMissing != nil {
				data := decode[struct {
					Name    string   `json:"name"`
					Missing []string `json:"missing"`
				}](t, e.Data)
				if data.Name != "compare" || !slices.Equal(data.Missing, tt.wantMissing) {
					t.Fatalf("data %s, want missing %v", e.Data, tt.wantMissing)
				}
			}
		})
	}
}
