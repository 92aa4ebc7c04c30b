// schema.go checks tool arguments against their JSON Schema (2020-12
// unless the schema says otherwise) and reports every violation with where
// it is and why, so a caller can fix all of them in one go.

package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Violation is one way arguments break a schema.
type Violation struct {
	Path   string `json:"path"`   // JSON pointer into the arguments ("" for the whole object)
	Reason string `json:"reason"` // English, from the validator
}

var printer = message.NewPrinter(language.English)

// CheckSchema reports whether raw compiles as an input schema the engine
// can validate arguments against (JSON Schema 2020-12 unless it names
// another draft).
func CheckSchema(raw json.RawMessage) error {
	_, err := compileFull(raw) // a check only: no raw check is made for it
	return err
}

// inputSchema is a compiled input schema: the full validator, and the
// raw check of schema_flat.go when the schema is simple enough for it.
type inputSchema struct {
	full *jsonschema.Schema
	flat *flatSchema
	// props are the top-level properties' names, and folded maps each
	// one's FoldKey to the first name of that form (readApart).
	props  map[string]bool
	folded map[string]string
}

func compileSchema(raw json.RawMessage) (*inputSchema, error) {
	full, err := compileFull(raw)
	if err != nil {
		return nil, err
	}
	in := &inputSchema{full: full, flat: flatten(raw), props: map[string]bool{}, folded: map[string]string{}}
	props, _ := jsonrpc.Lookup(raw, "properties")
	_ = jsonrpc.Members(props, func(k string, _ json.RawMessage) bool {
		in.props[k] = true
		if f := jsonrpc.FoldKey(k); in.folded[f] == "" {
			in.folded[f] = k
		}
		return true
	})
	return in, nil
}

func compileFull(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const loc = "mcpgate:///input-schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// emptyObject is {} decoded, shared by every call without arguments (most
// calls of a tool that takes none): no decoder is made for it. The
// validator only reads it.
var emptyObject any = map[string]any{}

// violations returns the violations of args (nil meaning {}) against s.
func (s *inputSchema) violations(args json.RawMessage) []Violation {
	if vs := s.readApart(args); len(vs) > 0 {
		return vs
	}
	if s.flat != nil && s.flat.valid(args) {
		return nil
	}
	return validate(s.full, args)
}

// readApart are the arguments that the validator and a backend could read
// apart. A key twice: readers differ on which one wins. A key that Go's
// encoding/json, matching keys without case, takes for a property
// without being one: the validator checks that property's value, the
// backend reads the other.
func (s *inputSchema) readApart(args json.RawMessage) []Violation {
	var out []Violation
	seen := jsonrpc.KeySet{Exact: true}
	_ = jsonrpc.MemberKeys(args, func(k []byte, _ json.RawMessage) bool {
		if _, twice := seen.Add(k); twice {
			out = append(out, Violation{Path: pointer([]string{string(k)}), Reason: "the argument is given more than once"})
			return true
		}
		if s.props[string(k)] || len(s.props) == 0 {
			return true // a property's own name, found without a string made
		}
		if prop := s.folded[jsonrpc.FoldKey(string(k))]; prop != "" {
			out = append(out, Violation{Path: pointer([]string{string(k)}),
				Reason: fmt.Sprintf("it is read as %q by a decoder that matches keys without case", prop)})
		}
		return true
	})
	return out
}

// validate returns the violations of args (nil meaning {}) against sch.
func validate(sch *jsonschema.Schema, args json.RawMessage) []Violation {
	var v any = emptyObject
	if len(args) != 0 && string(bytes.TrimSpace(args)) != "{}" {
		var err error
		if v, err = jsonschema.UnmarshalJSON(bytes.NewReader(args)); err != nil {
			return []Violation{{Reason: "arguments are not valid JSON"}}
		}
	}
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Violation{{Reason: err.Error()}}
	}
	var out []Violation
	collectViolations(ve, &out)
	return out
}

// collectViolations keeps the leaves of the error tree: the inner nodes
// only say "doesn't validate with …".
func collectViolations(e *jsonschema.ValidationError, out *[]Violation) {
	if len(e.Causes) == 0 {
		*out = append(*out, Violation{Path: pointer(e.InstanceLocation), Reason: e.ErrorKind.LocalizedString(printer)})
		return
	}
	for _, c := range e.Causes {
		collectViolations(c, out)
	}
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// Violations compiles schema and returns the violations of args against
// it; an error when the schema does not compile.
func Violations(schema, args json.RawMessage) ([]Violation, error) {
	sch, err := compileSchema(schema)
	if err != nil {
		return nil, err
	}
	return sch.violations(args), nil
}
