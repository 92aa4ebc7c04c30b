package wiremcp_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// The table: the seed's four exchanges on tags 3 to 6 and their paths,
// every other request on tag 9 (no path), initialize and notifications
// on nothing; Method reads back what ChannelRequest made.
func TestTheTableCarriesEveryRequestButInitialize(t *testing.T) {
	params := json.RawMessage(`{"name":"n","uri":"u","x":1}`)
	for _, tc := range []struct {
		method string
		want   wire.ChannelRequest
		path   string
	}{
		{"tools/list", wire.McpListTools{Params: params}, wire.PathListTools},
		{"resources/list", wire.McpListResources{Params: params}, wire.PathListResources},
		{"tools/call", wire.McpCallTool{Params: params}, wire.PathCallTool},
		{"resources/read", wire.McpReadResource{Params: params}, wire.PathReadResource},
		{"prompts/get", wire.McpRequest{Method: "prompts/get", Params: params}, ""},
		{"server/discover", wire.McpRequest{Method: "server/discover", Params: params}, ""},
		{"initialize", nil, ""},
		{"notifications/cancelled", nil, ""},
		{"", nil, ""},
	} {
		got, ok := wiremcp.ChannelRequest(tc.method, params)
		if ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ChannelRequest(%q) = %#v, %v; want %#v", tc.method, got, ok, tc.want)
		}
		if p := wiremcp.Path(tc.method); p != tc.path {
			t.Errorf("Path(%q) = %q, want %q", tc.method, p, tc.path)
		}
		if tc.path != "" {
			if m, check, ok := wiremcp.PathMethod(tc.path); !ok || m != tc.method || check == nil {
				t.Errorf("PathMethod(%q) = %q, %v", tc.path, m, ok)
			}
		}
		if got == nil {
			continue
		}
		if m, p, ok := wiremcp.Method(got); !ok || m != tc.method || string(p) != string(params) {
			t.Errorf("Method(%#v) = %q %s %v", got, m, p, ok)
		}
		// What goes on the wire decodes to the same request.
		back, err := wire.DecodeChannelRequest(got.Append(nil))
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("%s on the wire decodes to %#v, %v", tc.method, back, err)
		}
	}
	for _, req := range []wire.ChannelRequest{wire.Info{}, wire.McpNotifications{}, wire.Secrets{}, wire.Postgres{ConnID: 1}} {
		if _, _, ok := wiremcp.Method(req); ok {
			t.Errorf("Method(%#v) is an MCP request", req)
		}
	}
}
