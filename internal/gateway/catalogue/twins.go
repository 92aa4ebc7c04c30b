// twins.go withholds a definition that means one thing to the gateway and
// another to some client: one in which an object holds two keys that a
// reader could take for one. The gateway reads members by their exact
// key, the last of two; Go's encoding/json, as in an SDK's Tool, matches
// keys without case. {"name":"search","NAME":"b__send_email"} was listed
// as this backend's search, and a client in Go saw another backend's tool
// under this one's description.

package catalogue

import (
	"encoding/json"
	"slices"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// readApart are, for each kind, the members other than _meta whose own
// objects the gateway reads or rewrites, searched at every depth. A
// schema's properties are not among them: names that differ by case are
// a schema's own.
var readApart = map[kind][]string{
	kindTool:   {"annotations"},
	kindPrompt: {"arguments"},
}

// definitionTwins returns two keys of one object in def that a reader
// could take for one. It searches def's own keys, _meta's own keys, and
// anywhere in _meta's ui member (MCP Apps), which the gateway rewrites,
// and in def's readApart members. The rest of _meta is a vendor's, which
// a client reads into maps that match keys exactly.
func definitionTwins(k kind, def json.RawMessage) (key, other string, ok bool) {
	return jsonrpc.ObjectTwins(def, func(name []byte, v json.RawMessage) (string, string, bool) {
		switch {
		case string(name) == "_meta":
			return jsonrpc.ObjectTwins(v, func(name []byte, v json.RawMessage) (string, string, bool) {
				if string(name) == "ui" {
					return jsonrpc.FoldTwins(v)
				}
				return "", "", false
			})
		case slices.Contains(readApart[k], string(name)):
			return jsonrpc.FoldTwins(v)
		}
		return "", "", false
	})
}
