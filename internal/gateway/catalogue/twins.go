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
// could take for one: among def's own keys, in _meta (metaTwins), or
// anywhere in its readApart members.
func definitionTwins(k kind, def json.RawMessage) (key, other string, ok bool) {
	var own jsonrpc.FoldSet
	_ = jsonrpc.MemberKeys(def, func(name []byte, v json.RawMessage) bool {
		switch twin, found := own.Add(name); {
		case found:
			key, other, ok = string(twin), string(name), true
		case string(name) == "_meta":
			key, other, ok = metaTwins(v)
		case slices.Contains(readApart[k], string(name)):
			key, other, ok = jsonrpc.FoldTwins(v)
		}
		return !ok
	})
	return key, other, ok
}

// metaTwins is definitionTwins for _meta: its own keys, and anywhere in
// its ui member (MCP Apps), which the gateway rewrites. The rest is a
// vendor's, which a client reads into maps that match keys exactly.
func metaTwins(meta json.RawMessage) (key, other string, ok bool) {
	var own jsonrpc.FoldSet
	_ = jsonrpc.MemberKeys(meta, func(name []byte, v json.RawMessage) bool {
		if twin, found := own.Add(name); found {
			key, other, ok = string(twin), string(name), true
		} else if string(name) == "ui" {
			key, other, ok = jsonrpc.FoldTwins(v)
		}
		return !ok
	})
	return key, other, ok
}
