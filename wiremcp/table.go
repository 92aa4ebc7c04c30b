// table.go is which MCP method the wire carries how: on which channel
// request of the framed form and on which path of the per-path form, with
// the check its params get before they go anywhere. Tags 3 to 6 carry the
// four exchanges of the seed; tag 9 every other request (docs/wire.md 3.7) but
// initialize, which the proxy's own session owns, and notifications. The
// per-path form has the four paths only.

package wiremcp

import (
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate/wire"
)

// exchange is one MCP method the wire names.
type exchange struct {
	method  string
	path    string
	request func(json.RawMessage) wire.ChannelRequest
	check   func([]byte) error
}

var exchanges = []exchange{
	{"tools/list", wire.PathListTools, func(p json.RawMessage) wire.ChannelRequest { return wire.McpListTools{Params: p} }, wire.CheckListParams},
	{"resources/list", wire.PathListResources, func(p json.RawMessage) wire.ChannelRequest { return wire.McpListResources{Params: p} }, wire.CheckListParams},
	{"tools/call", wire.PathCallTool, func(p json.RawMessage) wire.ChannelRequest { return wire.McpCallTool{Params: p} }, wire.CheckCallToolParams},
	{"resources/read", wire.PathReadResource, func(p json.RawMessage) wire.ChannelRequest { return wire.McpReadResource{Params: p} }, wire.CheckReadResourceParams},
}

// ChannelRequest is the channel request that carries the MCP request
// method with params, or false when the wire carries no such request.
func ChannelRequest(method string, params json.RawMessage) (wire.ChannelRequest, bool) {
	for _, e := range exchanges {
		if e.method == method {
			return e.request(params), true
		}
	}
	if !Carried(method) {
		return nil, false
	}
	return wire.McpRequest{Method: method, Params: params}, true
}

// Carried reports whether the wire carries requests of method.
func Carried(method string) bool {
	return method != "" && method != "initialize" && !strings.HasPrefix(method, "notifications/")
}

// Method is the MCP request a decoded channel request carries, or false
// for the asks that are not MCP requests (Info, Secrets, the
// notification stream, the pairs).
func Method(req wire.ChannelRequest) (method string, params json.RawMessage, ok bool) {
	switch r := req.(type) {
	case wire.McpListTools:
		return "tools/list", r.Params, true
	case wire.McpListResources:
		return "resources/list", r.Params, true
	case wire.McpCallTool:
		return "tools/call", r.Params, true
	case wire.McpReadResource:
		return "resources/read", r.Params, true
	case wire.McpRequest:
		return r.Method, r.Params, true
	}
	return "", nil, false
}

// Path is the per-path form's path for method, or "" when it has none.
func Path(method string) string {
	for _, e := range exchanges {
		if e.method == method {
			return e.path
		}
	}
	return ""
}

// PathMethod is the MCP method served on a per-path path, and the check
// its params must pass (a failure is -32602 with the check's message).
func PathMethod(path string) (method string, check func([]byte) error, ok bool) {
	for _, e := range exchanges {
		if e.path == path {
			return e.method, e.check, true
		}
	}
	return "", nil, false
}
