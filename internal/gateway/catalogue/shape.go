// shape.go shapes a backend's tools and prompts as the configuration asks
// (config/shaping.go). The definition callers see is the backend's with
// the rule applied, every other byte kept. A call is turned back into the
// backend's own exactly once: its name and arguments are restored.

package catalogue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Shape is one rule over a backend's tools or prompts.
type Shape struct {
	// Key is where the rule stands in the configuration
	// ("backends[0].tools[1]"), named in every error about it.
	Key string
	// Name is a path.Match pattern over the backend's own name.
	Name string
	// Hide leaves the entry out, for every caller.
	Hide bool
	// Rename, Description and Title replace the backend's ("": kept).
	Rename, Description, Title string
	// Annotations is an object merged over the backend's (tools).
	Annotations json.RawMessage
	// Fixed arguments are always sent and refused from callers;
	// Defaults are sent when left out; HideArgs are refused (tools).
	Fixed, Defaults map[string]json.RawMessage
	HideArgs        []string
}

// Shapes are a backend's rules, the first match winning.
type Shapes struct {
	Tools, Prompts []Shape
}

// of is the rules of k (tools and prompts have them).
func (s Shapes) of(k kind) []Shape {
	switch k {
	case kindTool:
		return s.Tools
	case kindPrompt:
		return s.Prompts
	}
	return nil
}

// match is the first rule of rules matching name, and its index; -1 for
// none.
func match(rules []Shape, name string) (*Shape, int) {
	for i := range rules {
		if ok, _ := path.Match(rules[i].Name, name); ok {
			return &rules[i], i
		}
	}
	return nil, -1
}

// shapeError is a rule that cannot be applied to the entry it matches.
func shapeError(s *Shape, format string, args ...any) error {
	return fmt.Errorf("%s: %s", s.Key, fmt.Sprintf(format, args...))
}

// shapeTool returns the definition callers see of the tool def, and the
// name the prefix goes before.
func shapeTool(s *Shape, orig string, def json.RawMessage) (string, json.RawMessage, error) {
	name := orig
	if s.Rename != "" {
		name = s.Rename
	}
	var err error
	if def, err = replaceStrings(def, s.Description, s.Title); err != nil {
		return "", nil, shapeError(s, "%v", err)
	}
	if len(s.Annotations) > 0 {
		ann, _ := jsonrpc.Lookup(def, "annotations")
		if len(ann) == 0 || ann[0] != '{' {
			ann = json.RawMessage(`{}`)
		}
		if err := jsonrpc.Members(s.Annotations, func(k string, v json.RawMessage) bool {
			ann, err = jsonrpc.SetMember(ann, k, v)
			return err == nil
		}); err != nil {
			return "", nil, shapeError(s, "annotations: %v", err)
		}
		if def, err = jsonrpc.SetMember(def, "annotations", ann); err != nil {
			return "", nil, shapeError(s, "%v", err)
		}
	}
	if len(s.Fixed)+len(s.Defaults)+len(s.HideArgs) > 0 {
		schema, _ := jsonrpc.Lookup(def, "inputSchema")
		if schema, err = shapeSchema(s, schema); err != nil {
			return "", nil, err
		}
		if def, err = jsonrpc.SetMember(def, "inputSchema", schema); err != nil {
			return "", nil, shapeError(s, "%v", err)
		}
	}
	return name, def, nil
}

// replaceStrings sets def's description and title where given.
func replaceStrings(def json.RawMessage, description, title string) (json.RawMessage, error) {
	var err error
	for _, m := range [][2]string{{"description", description}, {"title", title}} {
		if m[1] == "" {
			continue
		}
		if def, err = jsonrpc.SetMember(def, m[0], jsonrpc.AppendString(nil, m[1])); err != nil {
			return nil, err
		}
	}
	return def, nil
}

// shapeSchema is the input schema callers see: the fixed and hidden
// properties gone from properties and required, the defaults set, every
// other keyword as the backend wrote it. A fixed value must validate
// against its property's schema; every argument named must exist.
func shapeSchema(s *Shape, schema json.RawMessage) (json.RawMessage, error) {
	props, _ := jsonrpc.Lookup(schema, "properties")
	has := func(name string) bool { v, err := jsonrpc.Lookup(props, name); return err == nil && len(v) > 0 }
	for _, name := range slices.Sorted(maps.Keys(s.Fixed)) {
		if !has(name) {
			return nil, shapeError(s, "arguments.fixed.%s: the tool has no argument %q", name, name)
		}
		if err := checkFixed(schema, name, s.Fixed[name]); err != nil {
			return nil, shapeError(s, "arguments.fixed.%s: %v", name, err)
		}
	}
	gone := append(slices.Sorted(maps.Keys(s.Fixed)), s.HideArgs...)
	for _, name := range s.HideArgs {
		if !has(name) {
			return nil, shapeError(s, "arguments.hide: the tool has no argument %q", name)
		}
	}
	var err error
	for _, name := range gone {
		if props, err = jsonrpc.WithoutMember(props, name); err != nil {
			return nil, shapeError(s, "inputSchema.properties: %v", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Defaults)) {
		prop, _ := jsonrpc.Lookup(props, name)
		if len(prop) == 0 {
			return nil, shapeError(s, "arguments.defaults.%s: the tool has no argument %q", name, name)
		}
		if prop, err = jsonrpc.SetMember(prop, "default", s.Defaults[name]); err != nil {
			return nil, shapeError(s, "arguments.defaults.%s: %v", name, err)
		}
		if props, err = jsonrpc.WithMember(props, name, prop); err != nil {
			return nil, shapeError(s, "arguments.defaults.%s: %v", name, err)
		}
	}
	if schema, err = jsonrpc.WithMember(schema, "properties", props); err != nil {
		return nil, shapeError(s, "inputSchema: %v", err)
	}
	if req, _ := jsonrpc.Lookup(schema, "required"); len(req) > 0 && req[0] == '[' {
		if schema, err = jsonrpc.WithMember(schema, "required", withoutStrings(req, gone)); err != nil {
			return nil, shapeError(s, "inputSchema: %v", err)
		}
	}
	return schema, nil
}

// checkFixed validates v as the value of property name of schema, read
// in the whole schema (so that its references resolve).
func checkFixed(schema json.RawMessage, name string, v json.RawMessage) error {
	open, err := jsonrpc.WithoutMember(schema, "required")
	if err != nil {
		return err
	}
	obj := jsonrpc.AppendString([]byte("{"), name)
	obj = append(append(append(obj, ':'), v...), '}')
	violations, err := mcp.Violations(open, obj)
	if err != nil {
		return fmt.Errorf("the tool's input schema does not compile: %v", err)
	}
	if len(violations) > 0 {
		// The value is not told: a fixed argument may be a credential,
		// and the validator's reason quotes it.
		return fmt.Errorf("the fixed value does not validate against the argument's schema (at %s)", violations[0].Path)
	}
	return nil
}

// withoutStrings is the raw array arr without the strings in drop, the
// others' bytes kept.
func withoutStrings(arr json.RawMessage, drop []string) json.RawMessage {
	out, _ := jsonrpc.RewriteArray(arr, func(it json.RawMessage) (json.RawMessage, bool) {
		var s string
		return it, json.Unmarshal(it, &s) != nil || !slices.Contains(drop, s)
	})
	return out
}

// shapePrompt returns the definition callers see of the prompt def: its
// description replaced, its fixed arguments gone from its list.
func shapePrompt(s *Shape, orig string, def json.RawMessage) (string, json.RawMessage, error) {
	name := orig
	if s.Rename != "" {
		name = s.Rename
	}
	var err error
	if def, err = replaceStrings(def, s.Description, ""); err != nil {
		return "", nil, shapeError(s, "%v", err)
	}
	if len(s.Fixed) == 0 {
		return name, def, nil
	}
	args, _ := jsonrpc.Lookup(def, "arguments")
	found := map[string]bool{}
	kept, ok := jsonrpc.RewriteArray(args, func(a json.RawMessage) (json.RawMessage, bool) {
		n, _ := jsonrpc.LookupString(a, "name")
		_, fixed := s.Fixed[n]
		found[n] = found[n] || fixed
		return a, !fixed
	})
	if !ok {
		kept = []byte("[]")
	}
	for _, n := range slices.Sorted(maps.Keys(s.Fixed)) {
		if !found[n] {
			return "", nil, shapeError(s, "arguments.fixed.%s: the prompt has no argument %q", n, n)
		}
	}
	if def, err = jsonrpc.SetMember(def, "arguments", kept); err != nil {
		return "", nil, shapeError(s, "%v", err)
	}
	return name, def, nil
}

// arguments turns a caller's params back into the backend's: a fixed or
// hidden argument the caller sent is refused (-32602, naming it), never
// overwritten; fixed values are set and defaults filled in. member is
// where the arguments are ("arguments" for tools and prompts alike).
func (s *Shape) arguments(params json.RawMessage) (json.RawMessage, error) {
	if s == nil || len(s.Fixed)+len(s.Defaults)+len(s.HideArgs) == 0 {
		return params, nil
	}
	args, _ := jsonrpc.Lookup(params, "arguments")
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		args = json.RawMessage(`{}`)
	}
	// A key that a decoder matching keys without case (Go's encoding/json,
	// as many servers use) reads as name counts as name: sent beside a
	// fixed value, the later of the two would win.
	sent := func(name string) bool {
		found := false
		_ = jsonrpc.MemberKeys(args, func(k []byte, _ json.RawMessage) bool {
			found = jsonrpc.EqualFold(k, name)
			return !found
		})
		return found
	}
	var refused []string
	for _, name := range append(slices.Sorted(maps.Keys(s.Fixed)), s.HideArgs...) {
		if sent(name) {
			refused = append(refused, name)
		}
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"invalid params: argument "+strings.Join(quoted(refused), ", ")+" may not be set",
			map[string]any{"arguments": refused})
	}
	var err error
	for _, name := range slices.Sorted(maps.Keys(s.Fixed)) {
		if args, err = jsonrpc.SetMember(args, name, s.Fixed[name]); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Defaults)) {
		if !sent(name) {
			if args, err = jsonrpc.SetMember(args, name, s.Defaults[name]); err != nil {
				return nil, err
			}
		}
	}
	return jsonrpc.SetMember(params, "arguments", args)
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
