// elicit.go is what the engine does to an elicitation answer on its way
// back to the server that asked: an accepted form carries the schema's
// default for every field the user left out (SEP-1034, 2025-11-25). The
// specification asks a client to pre-populate a form with the defaults. A
// relay cannot see the form. It can see an answer that omits a field the
// schema gave a default, and a user who accepted without touching the field
// accepted the default. The server then receives the complete object it
// would have received from a form client, as the TypeScript SDK's client
// sends with applyDefaults. A value the user gave is never replaced, and
// every byte of the answer around the added members is kept.

package mcp

import (
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// ElicitationDefaults returns result, the client's answer to the
// elicitation/create request with params, with each property default of
// params.requestedSchema added to result.content where content lacks it,
// in the schema's order. Only an accepted form-mode answer is touched (a
// URL-mode request has no schema); a content that is not an object, or
// anything unreadable, leaves result as it is. With nothing to add, result
// itself is returned.
func ElicitationDefaults(params, result json.RawMessage) json.RawMessage {
	if mode, ok := jsonrpc.LookupString(params, "mode"); ok && mode != "form" {
		return result
	}
	if action, _ := jsonrpc.LookupString(result, "action"); action != "accept" {
		return result
	}
	schema, err := jsonrpc.Lookup(params, "requestedSchema")
	if err != nil || schema == nil {
		return result
	}
	props, err := jsonrpc.Lookup(schema, "properties")
	if err != nil || props == nil {
		return result
	}
	content, err := jsonrpc.Lookup(result, "content")
	if err != nil {
		return result
	}
	if content != nil && !isObject(content) {
		return result
	}
	var add []byte // `"name":default` members, comma-separated
	seen := map[string]bool{}
	_ = jsonrpc.Members(props, func(name string, prop json.RawMessage) bool {
		def, err := jsonrpc.Lookup(prop, "default")
		if err != nil || def == nil || seen[name] {
			return true
		}
		seen[name] = true
		if content != nil {
			if given, _ := jsonrpc.Lookup(content, name); given != nil {
				return true
			}
		}
		if len(add) > 0 {
			add = append(add, ',')
		}
		add = jsonrpc.AppendString(add, name)
		add = append(add, ':')
		add = append(add, def...)
		return true
	})
	if len(add) == 0 {
		return result
	}
	if content == nil {
		obj := append(append([]byte(`"content":{`), add...), '}')
		return insertMember(result, len(result), obj)
	}
	start := jsonrpc.Offset(result, content)
	return insertMember(result, start+len(content), add)
}

// isObject reports whether raw (valid JSON) is an object.
func isObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// insertMember returns a copy of obj with members (one or more, without a
// leading comma) added as the last members of the object that ends before
// end (its closing brace is the last non-space byte before end).
func insertMember(obj []byte, end int, members []byte) json.RawMessage {
	brace := end - 1
	for brace >= 0 && obj[brace] != '}' {
		brace--
	}
	if brace < 0 {
		return obj
	}
	prev := brace - 1
	for prev >= 0 && (obj[prev] == ' ' || obj[prev] == '\t' || obj[prev] == '\n' || obj[prev] == '\r') {
		prev--
	}
	out := make([]byte, 0, len(obj)+len(members)+1)
	out = append(out, obj[:brace]...)
	if prev >= 0 && obj[prev] != '{' {
		out = append(out, ',')
	}
	out = append(out, members...)
	return append(out, obj[brace:]...)
}
