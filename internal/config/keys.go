// keys.go checks a configuration file's shape against the typed
// configuration before decoding it. A mistake is so reported as a user
// wrote it, by key path, with what was expected. It is not reported in the
// terms of Go's types ("field comand not found in type
// config.BackendConfig"). Every key is checked: unknown ones (with the
// nearest known key), and values of the wrong shape (a string where a list
// is needed, a word where a number is).

package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// checkKeys reports the first key of n that t does not take, or that has
// a value of the wrong shape. path is the key so far ("" at the top).
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return checkKeys(n.Content[0], t, path)
	}
	if n.Kind == yaml.AliasNode {
		return checkKeys(n.Alias, t, path)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Tag == "!!null" {
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // the type reads itself (Duration), and says what is wrong
	}
	where := path
	if where == "" {
		where = "the file"
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return bad(where, "expected a mapping of keys (key: value), got %s", describe(n))
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			f, ok := fields[key]
			if !ok {
				return bad(join(path, key), "unknown key%s", suggest(key, fields))
			}
			if err := checkKeys(val, f, join(path, key)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return bad(where, "expected a mapping (key: value), got %s", describe(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkKeys(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			example := ""
			if t.Elem().Kind() == reflect.String && n.Kind == yaml.ScalarNode {
				example = fmt.Sprintf(" — one item each, e.g. [%s]", strings.Join(strings.Fields(n.Value), ", "))
			}
			return bad(where, "expected a list%s; got %s", example, describe(n))
		}
		for i, item := range n.Content {
			if err := checkKeys(item, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return bad(where, "expected a string, got %s", describe(n))
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			return bad(where, "expected true or false, got %s", describe(n))
		}
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			return bad(where, "expected a whole number, got %s", describe(n))
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
			return bad(where, "expected a number, got %s", describe(n))
		}
	}
	return nil
}

// yamlFields maps each key a struct takes to its field's type, inline
// structs included.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describe names what a node is, as a user would.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return "the number " + v
	case "!!bool":
		return v
	}
	return strconv.Quote(v)
}

// suggest is the nearest known key, if one is near, and the keys known.
func suggest(key string, fields map[string]reflect.Type) string {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), k); d < bestD {
			best, bestD = k, d
		}
	}
	hint := ""
	if best != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", best)
	}
	return hint + "; known keys here: " + strings.Join(known, ", ")
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
