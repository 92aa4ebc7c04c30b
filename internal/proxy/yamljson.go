// yamljson.go turns the YAML of a front matter into JSON by walking its
// nodes, rather than decoding into Go maps. Keys keep the order the author
// wrote. Numbers keep their digits: a 30-digit integer stays one, where a
// map[string]any would round it through float64. Aliases are followed
// within a budget, so that a hostile file cannot expand itself without end.

package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

const (
	maxYAMLDepth = 64
	// maxYAMLNodes and maxYAMLBytes bound what a front matter may expand
	// to through aliases: values, and bytes of scalars.
	maxYAMLNodes = 100_000
	maxYAMLBytes = 4 << 20
)

// jsonNumber is JSON's number grammar: a YAML number written this way is
// copied as it is.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// member is one key of a JSON object and its value.
type member struct {
	key   string
	value json.RawMessage
}

type converter struct {
	nodes int // values converted so far
	size  int // bytes of scalars produced so far
}

// members converts a mapping node, applying merge keys ("<<") as YAML
// does: the mapping's own keys win, then earlier merged mappings.
func (c *converter) members(n *yaml.Node, depth int) ([]member, error) {
	var own, merged []*yaml.Node // key, value pairs
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			pairs, err := mergePairs(v)
			if err != nil {
				return nil, err
			}
			merged = append(merged, pairs...)
			continue
		}
		own = append(own, k, v)
	}
	seen := map[string]bool{}
	var out []member
	for i := 0; i < len(own); i += 2 {
		key, err := keyOf(own[i])
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("line %d: key %q appears twice", own[i].Line, key)
		}
		seen[key] = true
		if out, err = c.add(out, key, own[i+1], depth); err != nil {
			return nil, err
		}
	}
	for i := 0; i < len(merged); i += 2 {
		key, err := keyOf(merged[i])
		if err != nil {
			return nil, err
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if out, err = c.add(out, key, merged[i+1], depth); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *converter) add(out []member, key string, v *yaml.Node, depth int) ([]member, error) {
	value, err := c.value(v, depth+1)
	if err != nil {
		return nil, err
	}
	return append(out, member{key, value}), nil
}

// mergePairs returns the key, value pairs a merge key brings in: one
// mapping, or a list of them.
func mergePairs(v *yaml.Node) ([]*yaml.Node, error) {
	v = resolve(v)
	var maps []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{v}
	case yaml.SequenceNode:
		for _, item := range v.Content {
			maps = append(maps, resolve(item))
		}
	}
	var pairs []*yaml.Node
	for _, m := range maps {
		if m.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: a merge key (<<) takes a mapping or a list of them", v.Line)
		}
		pairs = append(pairs, m.Content...)
	}
	return pairs, nil
}

func keyOf(k *yaml.Node) (string, error) {
	if k.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: a key must be a plain value, not a %s", k.Line, kindName(k))
	}
	return k.Value, nil
}

// value converts any node.
func (c *converter) value(n *yaml.Node, depth int) (json.RawMessage, error) {
	if depth > maxYAMLDepth {
		return nil, fmt.Errorf("line %d: nested deeper than %d levels", n.Line, maxYAMLDepth)
	}
	if c.nodes++; c.nodes > maxYAMLNodes {
		return nil, fmt.Errorf("expands to more than %d values", maxYAMLNodes)
	}
	n = resolve(n)
	var out []byte
	switch n.Kind {
	case yaml.MappingNode:
		members, err := c.members(n, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, '{')
		for i, m := range members {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendJSONString(out, m.key)
			out = append(append(out, ':'), m.value...)
		}
		out = append(out, '}')
	case yaml.SequenceNode:
		out = append(out, '[')
		for i, item := range n.Content {
			v, err := c.value(item, depth+1)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, v...)
		}
		out = append(out, ']')
	case yaml.ScalarNode:
		v, err := scalar(n)
		if err != nil {
			return nil, err
		}
		if c.size += len(v); c.size > maxYAMLBytes {
			return nil, fmt.Errorf("expands to more than %d bytes", maxYAMLBytes)
		}
		out = v
	default:
		return nil, fmt.Errorf("line %d: unexpected %s", n.Line, kindName(n))
	}
	return out, nil
}

// scalar converts a scalar by its resolved tag. Tags JSON has no type for
// (timestamps, binary, custom ones) become strings of the text written.
func scalar(n *yaml.Node) (json.RawMessage, error) {
	switch n.ShortTag() {
	case "!!null":
		return json.RawMessage("null"), nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %v", n.Line, err)
		}
		return json.Marshal(b)
	case "!!int", "!!float":
		if s := strings.TrimPrefix(n.Value, "+"); jsonNumber.MatchString(s) {
			return json.RawMessage(s), nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %v", n.Line, err)
		}
		if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return nil, fmt.Errorf("line %d: %s has no JSON form", n.Line, n.Value)
		}
		return json.Marshal(v)
	default:
		return appendJSONString(nil, n.Value), nil
	}
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxYAMLDepth; i++ {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	case yaml.AliasNode:
		return "alias"
	default:
		return "document"
	}
}

// appendJSONString appends s as a JSON string, leaving <, > and & as they
// are (a readme is full of them, and JSON does not need them escaped).
func appendJSONString(b []byte, s string) []byte { return appendJSONStringHTML(b, s, false) }

// appendJSONStringHTML appends s as a JSON string, escaping <, > and & when
// html is set.
func appendJSONStringHTML(b []byte, s string, html bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
