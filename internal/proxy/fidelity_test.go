// fidelity_test.go pins docs/wire.md's fidelity rules end to end: what the
// upstream MCP server sends — custom JSON-RPC error codes with data and
// members JSON-RPC does not define, results with unknown fields, _meta,
// isError, structuredContent and integers no float64 holds, all pretty
// printed — reaches the gateway's side of the wire byte for byte, in both
// forms.

package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// customErrors are the error objects the fidelity server answers with, by
// code: the standard ones an agent tells apart, and server-defined ones.
var customErrors = map[int]string{}

func init() {
	for _, code := range []int{-32601, -32602, -32001, -32099} {
		customErrors[code] = fmt.Sprintf(`{
    "code": %d,
    "message": "custom failure %d",
    "data": {
        "retryAfter": 123456789012345678901234567890,
        "why": ["a", "b"],
        "nested": {"n": -0.0, "e": 1E+400}
    },
    "x-unknown-member": {"kept": true}
}`, code, code)
	}
}

// fidelityResource is a resources/read result no typed struct would keep.
const fidelityResource = `{
  "contents": [
    {"uri": "fidelity://doc", "mimeType": "text/plain", "text": "x", "x-extra": 18446744073709551617}
  ],
  "_meta": {"vendor.example/etag": "W/\"1\""},
  "nextThing": null
}`

// fidelityServer answers with the bytes above.
func fidelityServer() *mcp.Server {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "fidelity", Version: "1"}})
	tools := []*mcp.Tool{{Name: "result", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(fidelityResult), nil
	}}}
	for code, raw := range customErrors {
		tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("error%d", code),
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				return nil, jsonrpc.RawError(json.RawMessage(raw))
			}})
	}
	if err := s.AddTools(tools...); err != nil {
		panic(err)
	}
	err := s.AddResources(&mcp.Resource{URI: "fidelity://doc", Name: "doc",
		Read: func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
			return json.RawMessage(fidelityResource), nil
		}})
	if err != nil {
		panic(err)
	}
	return s
}

func TestTheGatewayReceivesTheUpstreamsBytes(t *testing.T) {
	ctx := testCtx(t)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: serveMCP(t, fidelityServer())})
	base := serveProxy(t, Options{Upstream: up})
	for _, f := range []form{perPath{base}, beginFramed(t, ctx, base)} {
		t.Run(f.name(), func(t *testing.T) {
			got := result(t, f.exchange(t, ctx, "tools/call", `{"name":"result"}`))
			if string(got) != fidelityResult {
				t.Errorf("tools/call result:\n got %s\nwant %s", got, fidelityResult)
			}
			got = result(t, f.exchange(t, ctx, "resources/read", `{"uri":"fidelity://doc"}`))
			if string(got) != fidelityResource {
				t.Errorf("resources/read result:\n got %s\nwant %s", got, fidelityResource)
			}
			for code, raw := range customErrors {
				resp := f.exchange(t, ctx, "tools/call", fmt.Sprintf(`{"name":"error%d","arguments":{}}`, code))
				if got := errorAnswer(t, resp); string(got) != raw {
					t.Errorf("error %d:\n got %s\nwant %s", code, got, raw)
				}
				if resp.Error.Code != int64(code) {
					t.Errorf("error %d decoded as code %d", code, resp.Error.Code)
				}
			}
		})
	}
}
