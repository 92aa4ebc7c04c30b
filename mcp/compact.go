// compact.go is the catalogue's second view, for clients with small
// contexts. Each entry's description is its short one when it has one,
// and the full text otherwise. Its schemas keep every keyword a call is
// checked against (types, required, enum, const, format, bounds, $ref…).
// They lose what is only prose: description, title, examples, $comment.
// A call valid in one view is so valid in the other.
//
// The full view is the default: the entries' definitions as they are. The
// compact one is made once, at registration. A request gets it when its
// caller's Identity.View says so.

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// View is which form of the catalogue a request is served.
type View uint8

const (
	// ViewFull is every entry as it is defined (the default).
	ViewFull View = iota
	// ViewCompact is short descriptions and schemas without prose.
	ViewCompact
	// ViewSearch is the compact view with, for tools, only the pinned
	// ones and the tools of the search mode (Tool.Search): a catalogue
	// too big for any context is searched instead of listed.
	ViewSearch
)

// viewBit is v's bit in a slot's set of views.
func viewBit(v View) uint8 { return 1 << v }

// everyView lists an entry in every view; searchOnly in the search view.
const (
	everyView  = 1<<ViewFull | 1<<ViewCompact | 1<<ViewSearch
	searchOnly = 1 << ViewSearch
	notSearch  = 1<<ViewFull | 1<<ViewCompact
)

// viewOf is the view of the caller in ctx (ViewFull when none).
func viewOf(ctx context.Context) View {
	id, _ := IdentityFrom(ctx)
	return id.View
}

// proseKeywords are the schema keywords that only describe.
var proseKeywords = map[string]bool{"description": true, "title": true, "examples": true, "$comment": true}

// Schema keywords whose value is a schema, a map of schemas, or a list
// of schemas (JSON Schema 2020-12, and draft-07's items array and
// definitions).
var (
	subschemaKeywords = map[string]bool{"items": true, "additionalItems": true, "additionalProperties": true, "not": true,
		"if": true, "then": true, "else": true, "contains": true, "propertyNames": true, "unevaluatedItems": true,
		"unevaluatedProperties": true, "contentSchema": true}
	schemaMapKeywords  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	schemaListKeywords = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true}
)

// CompactSchema is schema without its prose keywords, wherever a schema
// may stand; every other member is kept as it was, in its order, byte
// for byte. What is not an object (true, false, or not JSON) comes back
// as it is.
func CompactSchema(schema json.RawMessage) json.RawMessage {
	if len(schema) == 0 || schema[0] != '{' {
		return schema
	}
	out := make([]byte, 0, len(schema))
	out = append(out, '{')
	n := 0
	err := jsonrpc.Members(schema, func(k string, v json.RawMessage) bool {
		if proseKeywords[k] {
			return true
		}
		switch {
		case schemaMapKeywords[k] && len(v) > 0 && v[0] == '{':
			v = compactEach(v)
		case schemaListKeywords[k] && len(v) > 0 && v[0] == '[':
			v = compactList(v)
		case subschemaKeywords[k]:
			v = CompactSchema(v)
		}
		out = appendMember(out, n, k, v)
		n++
		return true
	})
	if err != nil {
		return schema
	}
	return append(out, '}')
}

// compactEach compacts every schema of a map of them (their names kept:
// a property named "description" is a property).
func compactEach(m json.RawMessage) json.RawMessage {
	out := make([]byte, 0, len(m))
	out = append(out, '{')
	n := 0
	if err := jsonrpc.Members(m, func(k string, v json.RawMessage) bool {
		out = appendMember(out, n, k, CompactSchema(v))
		n++
		return true
	}); err != nil {
		return m
	}
	return append(out, '}')
}

func compactList(l json.RawMessage) json.RawMessage {
	var items []json.RawMessage
	if json.Unmarshal(l, &items) != nil {
		return l
	}
	out := make([]byte, 0, len(l))
	out = append(out, '[')
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, CompactSchema(it)...)
	}
	return append(out, ']')
}

func appendMember(out []byte, n int, k string, v json.RawMessage) []byte {
	if n > 0 {
		out = append(out, ',')
	}
	out = jsonrpc.AppendString(out, k)
	out = append(out, ':')
	return append(out, v...)
}

// derived is what the compact view and the search mode make of an
// entry's definition, made once, when one of them first needs it: most
// gateways serve neither, and a relayed catalogue is registered anew at
// every sync.
type derived struct {
	def     json.RawMessage
	short   string
	once    sync.Once
	compact json.RawMessage // nil: def itself
	search  SearchEntry     // Name left to the caller
}

func newDerived(def json.RawMessage, short string) *derived {
	return &derived{def: def, short: short}
}

func (d *derived) make() {
	d.once.Do(func() {
		if c := CompactDefinition(d.def, d.short); !bytes.Equal(c, d.def) {
			d.compact = c
		}
		d.search.Description, _ = jsonrpc.LookupString(d.def, "description")
		d.search.Title, _ = jsonrpc.LookupString(d.def, "title")
		d.search.Definition = d.compact
		if d.search.Definition == nil {
			d.search.Definition = d.def
		}
	})
}

// compactDef is the compact form (nil: the definition itself).
func (d *derived) compactDef() json.RawMessage {
	d.make()
	return d.compact
}

// CompactDefinition is an entry's list definition in the compact view:
// its description replaced by short ("" keeps the full one), its schemas
// (inputSchema, outputSchema) compacted, its prompt arguments without
// their descriptions and titles; every other member as it was.
func CompactDefinition(def json.RawMessage, short string) json.RawMessage {
	if len(def) == 0 || def[0] != '{' {
		return def
	}
	out := make([]byte, 0, len(def))
	out = append(out, '{')
	n := 0
	err := jsonrpc.Members(def, func(k string, v json.RawMessage) bool {
		switch k {
		case "description":
			if short != "" {
				v = jsonrpc.AppendString(nil, short)
			}
		case "inputSchema", "outputSchema":
			v = CompactSchema(v)
		case "arguments":
			v = compactArguments(v)
		}
		out = appendMember(out, n, k, v)
		n++
		return true
	})
	if err != nil {
		return def
	}
	return append(out, '}')
}

// compactArguments drops a prompt's arguments' descriptions and titles.
func compactArguments(args json.RawMessage) json.RawMessage {
	var items []json.RawMessage
	if len(args) == 0 || args[0] != '[' || json.Unmarshal(args, &items) != nil {
		return args
	}
	out := make([]byte, 0, len(args))
	out = append(out, '[')
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		if len(it) == 0 || it[0] != '{' {
			out = append(out, it...)
			continue
		}
		out = append(out, '{')
		n := 0
		_ = jsonrpc.Members(it, func(k string, v json.RawMessage) bool {
			if k != "description" && k != "title" {
				out = appendMember(out, n, k, v)
				n++
			}
			return true
		})
		out = append(out, '}')
	}
	return append(out, ']')
}

// CallTool calls the tool name with args as if the caller had sent
// tools/call for it: the same identity, the same progress token, through
// the gate and the observers (the audit names name). The search mode's
// call tool is one.
func (r *Request) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	s := r.server()
	if s == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "internal error: a request of no server", nil)
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	p := append(jsonrpc.AppendString([]byte(`{"name":`), name), `,"arguments":`...)
	p = append(p, args...)
	if meta := r.metaRaw; meta != nil {
		p = append(append(p, `,"_meta":`...), meta...)
	}
	inner := &Request{Session: r.Session, ID: r.ID, Method: "tools/call", Params: append(p, '}'), sink: r.sink, abort: r.abort, meta: r.meta, metaRaw: r.metaRaw}
	return s.serve(ctx, inner)
}

func (r *Request) server() *Server {
	switch {
	case r.Session != nil:
		return r.Session.server
	case r.meta != nil:
		return r.meta.server
	}
	return nil
}

// SearchEntry is a tool the search mode may find: its name, its
// description and its compact definition.
type SearchEntry struct {
	Name, Title, Description string
	Definition               json.RawMessage // the compact view's
}

// SearchableTools are the tools the caller in ctx may see, but for the
// search mode's own, in list order.
func (s *Server) SearchableTools(ctx context.Context) []SearchEntry {
	var out []SearchEntry
	s.tools.each(func(sl *slot[*Tool]) bool {
		if sl.views != searchOnly && s.gate.Visible(ctx, sl.entry) {
			sl.derived.make()
			e := sl.derived.search
			e.Name = sl.entry.Name
			out = append(out, e)
		}
		return true
	})
	return out
}
