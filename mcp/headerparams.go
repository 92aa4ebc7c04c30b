// headerparams.go is 2026-07-28's custom headers (SEP-2243): a tool may
// mark arguments with x-mcp-header, and a client on Streamable HTTP then
// mirrors their values into Mcp-Param-{Name} headers, so that a load
// balancer can route on them. A server that reads the body must check that
// each header says what the body says; otherwise the balancer and the
// server would act on different values.
//
// The annotations are read once, when a tool is registered (HeaderParams);
// the check runs per call, after the gate (checkHeaderParams), on the
// headers the transport collected (Sessionless.WithParamHeaders).

package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// HeaderParamPrefix starts the header that mirrors an annotated argument.
const HeaderParamPrefix = "Mcp-Param-"

// HeaderParam is a tool argument mirrored into the header
// Mcp-Param-{Name}.
type HeaderParam struct {
	Name string   // as the schema spells it; header names match case-insensitively
	Path []string // the chain of properties keys from the schema's root
	Type string   // string, integer or boolean
}

// schemaKeywords are the keywords whose values are schemas (or objects or
// arrays of schemas). An x-mcp-header under one of them is not statically
// reachable through properties alone, and makes the tool invalid; other
// keywords (default, const, enum, examples) hold instances, not schemas.
var schemaKeywords = map[string]bool{
	"items": true, "prefixItems": true, "additionalItems": true, "contains": true,
	"additionalProperties": true, "patternProperties": true, "propertyNames": true,
	"unevaluatedItems": true, "unevaluatedProperties": true,
	"dependentSchemas": true, "dependencies": true, "$defs": true, "definitions": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
}

// schemaMaps are the schema keywords whose value maps names to schemas.
var schemaMaps = map[string]bool{
	"patternProperties": true, "dependentSchemas": true, "dependencies": true, "$defs": true, "definitions": true,
}

// HeaderParams reads the x-mcp-header annotations of an input schema, and
// refuses one that breaks the revision's rules. The rules: a name is a
// non-empty HTTP token, no two names are equal but for case, an annotated
// value is a string, an integer or a boolean, and it is reached from the
// root through properties alone.
func HeaderParams(schema json.RawMessage) ([]HeaderParam, error) {
	if len(schema) == 0 || !jsonrpc.MayHold(schema, "x-mcp-header") {
		return nil, nil // the common case, without a walk
	}
	var out []HeaderParam
	if err := walkHeaderParams(schema, nil, true, &out); err != nil {
		return nil, err
	}
	for i := range out {
		for j := range i {
			if strings.EqualFold(out[i].Name, out[j].Name) {
				return nil, fmt.Errorf("x-mcp-header %q is declared twice (header names are case-insensitive)", out[i].Name)
			}
		}
	}
	return out, nil
}

func walkHeaderParams(node json.RawMessage, path []string, reachable bool, out *[]HeaderParam) error {
	switch {
	case len(node) > 0 && node[0] == '[':
		var items []json.RawMessage
		if json.Unmarshal(node, &items) != nil {
			return nil
		}
		for _, it := range items {
			if err := walkHeaderParams(it, path, false, out); err != nil {
				return err
			}
		}
		return nil
	case len(node) == 0 || node[0] != '{':
		return nil
	}
	return eachMember(node, func(key string, v json.RawMessage) error {
		switch {
		case key == "x-mcp-header":
			return headerParamAt(node, v, path, reachable, out)
		case key == "properties":
			return eachMember(v, func(name string, sub json.RawMessage) error {
				return walkHeaderParams(sub, append(path[:len(path):len(path)], name), reachable, out)
			})
		case !schemaKeywords[key]:
			return nil
		case len(v) > 0 && v[0] == '{' && schemaMaps[key]:
			return eachMember(v, func(_ string, sub json.RawMessage) error {
				return walkHeaderParams(sub, path, false, out)
			})
		default:
			return walkHeaderParams(v, path, false, out)
		}
	})
}

// eachMember calls f for each member of an object until f fails.
func eachMember(obj json.RawMessage, f func(key string, v json.RawMessage) error) error {
	var err error
	_ = jsonrpc.Members(obj, func(key string, v json.RawMessage) bool {
		err = f(key, v)
		return err == nil
	})
	return err
}

func headerParamAt(node, v json.RawMessage, path []string, reachable bool, out *[]HeaderParam) error {
	var name string
	if json.Unmarshal(v, &name) != nil {
		return fmt.Errorf("x-mcp-header at %s is not a string", pathString(path))
	}
	if !reachable || len(path) == 0 {
		return fmt.Errorf("x-mcp-header %q at %s is not reachable from the root through properties alone", name, pathString(path))
	}
	if !isToken(name) {
		return fmt.Errorf("x-mcp-header %q at %s is not an HTTP header token", name, pathString(path))
	}
	var typ string
	if t, _ := jsonrpc.Lookup(node, "type"); json.Unmarshal(t, &typ) != nil || (typ != "string" && typ != "integer" && typ != "boolean") {
		return fmt.Errorf("x-mcp-header %q at %s is on a parameter whose type is not string, integer or boolean", name, pathString(path))
	}
	*out = append(*out, HeaderParam{Name: name, Path: path, Type: typ})
	return nil
}

func pathString(path []string) string {
	if len(path) == 0 {
		return "the schema's root"
	}
	return "arguments." + strings.Join(path, ".")
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// checkHeaderParams says how the Mcp-Param headers of a call differ from
// its arguments ("" when they agree). A value in the body needs its header,
// and a header needs its value. The two must be equal once the header is
// decoded; integers are compared as numbers. headers are keyed by the
// lower-cased name after the prefix.
func checkHeaderParams(ps []HeaderParam, args json.RawMessage, headers map[string][]string) string {
	for _, p := range ps {
		header := HeaderParamPrefix + p.Name
		body := lookupPath(args, p.Path)
		vs, sent := headers[strings.ToLower(p.Name)]
		present := len(body) > 0 && string(body) != "null"
		switch {
		case !sent && !present:
			continue
		case !sent:
			return "header mismatch: the " + header + " header is required when arguments." + strings.Join(p.Path, ".") + " is given"
		case !present:
			return "header mismatch: " + header + " is sent but arguments." + strings.Join(p.Path, ".") + " is not given"
		case len(vs) != 1:
			return "header mismatch: " + header + " is sent more than once"
		}
		value, ok := decodeParamHeader(vs[0])
		if !ok {
			return "header mismatch: " + header + " is not a valid header value (non-ASCII or control characters must be sent as =?base64?…?=)"
		}
		if !headerMatchesBody(p.Type, value, body) {
			return "header mismatch: " + header + " does not match arguments." + strings.Join(p.Path, ".")
		}
	}
	return ""
}

// decodeParamHeader reads a header value: visible ASCII, space and tab
// only; a value between =?base64? and ?= is the Base64 of its UTF-8 bytes
// and must decode (padding included); any other value is itself.
func decodeParamHeader(v string) (string, bool) {
	for i := range len(v) {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", false
		}
	}
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}

func headerMatchesBody(typ, value string, body json.RawMessage) bool {
	switch typ {
	case "integer":
		h, err1 := strconv.ParseFloat(value, 64)
		b, err2 := strconv.ParseFloat(string(body), 64)
		return err1 == nil && err2 == nil && !math.IsNaN(h) && h == b
	case "boolean":
		return (value == "true" || value == "false") && value == string(body)
	default:
		var s string
		return json.Unmarshal(body, &s) == nil && s == value
	}
}

// lookupPath is the value at a chain of member names, or nil.
func lookupPath(v json.RawMessage, path []string) json.RawMessage {
	for _, k := range path {
		if len(v) == 0 || v[0] != '{' {
			return nil
		}
		v, _ = jsonrpc.Lookup(v, k)
	}
	return v
}

// EncodeHeaderValue is how a client writes an Mcp-Name or Mcp-Param value:
// as it is when it is visible ASCII with no space at either end and does
// not look like the Base64 sentinel, else =?base64?…?= of its UTF-8 bytes.
func EncodeHeaderValue(s string) string {
	plain := s != "" && s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t' &&
		!(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; plain && i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			plain = false
		}
	}
	if plain || s == "" {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// ParamHeaders are the Mcp-Param headers a client sends with a call of a
// tool annotated ps with args: one per annotated argument given (not
// null), as name, value pairs.
func ParamHeaders(ps []HeaderParam, args json.RawMessage) [][2]string {
	var out [][2]string
	for _, p := range ps {
		v := lookupPath(args, p.Path)
		if len(v) == 0 || string(v) == "null" {
			continue
		}
		var s string
		switch p.Type {
		case "string":
			if json.Unmarshal(v, &s) != nil {
				continue
			}
			s = EncodeHeaderValue(s)
		case "integer":
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				continue
			}
			s = strconv.FormatFloat(f, 'f', -1, 64)
		default:
			s = string(v)
		}
		out = append(out, [2]string{HeaderParamPrefix + p.Name, s})
	}
	return out
}

// HeaderParams is the x-mcp-header arguments of the tool r calls (nil for
// any other request).
func (r *Request) HeaderParams() []HeaderParam {
	if r.target.tool == nil {
		return nil
	}
	return r.target.tool.headers
}
