// schema_flat.go checks the arguments of the most common input schema on
// their raw bytes: an object of named properties, each of one primitive
// type, some required. Most tools' schemas are such, and the full
// validator first decodes the arguments into maps and interfaces (17 of a
// served call's allocations in BenchmarkGatewayToolsCall). The check only
// ever says "valid"; anything it cannot vouch for, an invalid argument
// among them, goes to the full validator, which alone words violations.

package mcp

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// flatSchema is an input schema that flatten could read.
type flatSchema struct {
	props    map[string]flatProp
	required uint64 // a bit per required property, by flatProp.bit
	closed   bool   // additionalProperties: false
}

// flatProp is one property: its JSON type, and its bit when required.
type flatProp struct {
	kind byte // 's' string, 'n' number, 'i' integer, 'b' boolean, 'z' null
	bit  uint64
}

var flatKinds = map[string]byte{"string": 's', "number": 'n', "integer": 'i', "boolean": 'b', "null": 'z'}

// flatDrafts are the $schema values under which type, properties,
// required and additionalProperties mean what flatSchema checks, and
// title, description, default and examples assert nothing.
var flatDrafts = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema":  true,
	"https://json-schema.org/draft/2020-12/schema#": true,
	"http://json-schema.org/draft-07/schema":        true,
	"http://json-schema.org/draft-07/schema#":       true,
}

// annotation reports whether key asserts nothing in a schema.
func annotation(key string) bool {
	switch key {
	case "title", "description", "$comment", "default", "examples":
		return true
	}
	return strings.HasPrefix(key, "x-")
}

// flatten reads raw as a flatSchema, or nil when it says anything more.
func flatten(raw json.RawMessage) *flatSchema {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	f := &flatSchema{props: map[string]flatProp{}}
	var required []string
	for key, v := range top {
		var ok bool
		switch {
		case annotation(key):
			ok = true
		case key == "$schema":
			var s string
			ok = json.Unmarshal(v, &s) == nil && flatDrafts[s]
		case key == "type":
			ok = string(v) == `"object"`
		case key == "additionalProperties":
			ok = json.Unmarshal(v, &f.closed) == nil
			f.closed = !f.closed
		case key == "required":
			ok = json.Unmarshal(v, &required) == nil
		case key == "properties":
			ok = f.readProps(v)
		}
		if !ok {
			return nil
		}
	}
	if string(top["type"]) != `"object"` || len(f.props) > 64 {
		return nil
	}
	for _, name := range required {
		p, ok := f.props[name]
		if !ok {
			return nil // required without a property: left to the full validator
		}
		f.required |= p.bit
	}
	return f
}

// readProps reads properties whose schemas each name one primitive type.
func (f *flatSchema) readProps(raw json.RawMessage) bool {
	var props map[string]map[string]json.RawMessage
	if json.Unmarshal(raw, &props) != nil {
		return false
	}
	for name, sch := range props {
		var kind byte
		for key, v := range sch {
			switch {
			case annotation(key):
			case key == "type":
				var t string
				if json.Unmarshal(v, &t) != nil || flatKinds[t] == 0 {
					return false
				}
				kind = flatKinds[t]
			default:
				return false
			}
		}
		if kind == 0 {
			return false
		}
		f.props[name] = flatProp{kind: kind, bit: 1 << len(f.props)}
	}
	return true
}

// valid reports whether args (nil meaning {}) surely meet the schema.
func (f *flatSchema) valid(args json.RawMessage) bool {
	if len(args) == 0 {
		return f.required == 0
	}
	if !jsonrpc.Valid(args) {
		return false
	}
	var seen uint64
	ok := true
	err := jsonrpc.MemberKeys(args, func(key []byte, value json.RawMessage) bool {
		p, known := f.props[string(key)]
		if !known {
			ok = !f.closed
			return ok
		}
		if ok = p.accepts(value); ok {
			seen |= p.bit
		}
		return ok
	})
	return err == nil && ok && seen&f.required == f.required
}

// accepts reports whether value, valid JSON, is surely of p's type.
func (p flatProp) accepts(value json.RawMessage) bool {
	switch c := value[0]; p.kind {
	case 's':
		return c == '"'
	case 'b':
		return c == 't' || c == 'f'
	case 'z':
		return c == 'n'
	case 'n':
		return c == '-' || c >= '0' && c <= '9'
	default: // 'i': a number without a fraction or an exponent
		return (c == '-' || c >= '0' && c <= '9') && !bytes.ContainsAny(value, ".eE")
	}
}
