// request_entry.go keeps the name of the entry a request is about, looked
// up once: on a relayed tools/call the metrics and audit middlewares, the
// gateway's owner lookup, the engine and the relay each read params.name
// again, and every lookup walked the params and copied the name.

package mcp

import "github.com/mcpgate/mcpgate/jsonrpc"

// entryLookup is the outcome of one EntryName lookup and the params it
// was made in.
type entryLookup struct {
	params []byte
	name   string
	ok     bool
}

// EntryName returns the entry a tools/call, prompts/get or resources/read
// names: params.name, or params.uri for resources/read (params.name for
// any other method); ok is false when that member is absent or not a
// string. The lookup is made once and kept for as long as r.Params is the
// same slice (a middleware that replaces Params gets a fresh lookup). Like
// the rest of a Request, it is for the goroutine serving it.
func (r *Request) EntryName() (string, bool) {
	if len(r.Params) > 0 && len(r.entry.params) == len(r.Params) && &r.entry.params[0] == &r.Params[0] {
		return r.entry.name, r.entry.ok
	}
	member := "name"
	if r.Method == "resources/read" {
		member = "uri"
	}
	name, ok := jsonrpc.LookupString(r.Params, member)
	r.entry = entryLookup{params: r.Params, name: name, ok: ok}
	return name, ok
}
