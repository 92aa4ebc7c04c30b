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

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// readApart are, for each kind, the members whose own objects the gateway
// reads or rewrites, searched at every depth: a schema's properties are
// not among them, since names that differ by case are a schema's own.
var readApart = map[kind][]string{
	kindTool:     {"_meta", "annotations"},
	kindPrompt:   {"_meta", "arguments"},
	kindTemplate: {"_meta"},
	kindResource: {"_meta"},
}

// definitionTwins returns two keys of one object in def that a reader
// could take for one: among def's own keys, or anywhere in its readApart
// members.
func definitionTwins(k kind, def json.RawMessage) (key, other string, ok bool) {
	var own jsonrpc.FoldSet
	_ = jsonrpc.MemberKeys(def, func(name []byte, v json.RawMessage) bool {
		if twin, found := own.Add(name); found {
			key, other, ok = string(twin), string(name), true
			return false
		}
		for _, m := range readApart[k] {
			if string(name) == m {
				key, other, ok = jsonrpc.FoldTwins(v)
			}
		}
		return !ok
	})
	return key, other, ok
}
