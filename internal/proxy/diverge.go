// diverge.go reads the image's DIVERGE.md (docs/wire.md §3.5, Info): an
// optional YAML front matter between two "---" lines, whose keys become the
// document's, and the Markdown after it, which becomes "readme". Two keys
// mean something to the proxy, and are checked for shape here: "arguments",
// a JSON Schema of the begin's arguments, and "secrets", the names of the
// secrets the program needs. A broken image so says so when asked for its
// Info, rather than misbehaving later.

package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// DefaultInfoPath is where the image keeps its DIVERGE.md.
const DefaultInfoPath = "/DIVERGE.md"

// Info is a parsed DIVERGE.md.
type Info struct {
	// Doc is the whole document: the front matter's keys in their order,
	// then "readme".
	Doc json.RawMessage
	// Secrets are the declared secret names (nil when none are declared).
	Secrets []string
	// ArgumentsSchema is the "arguments" key, when present.
	ArgumentsSchema json.RawMessage
}

// InfoError is a DIVERGE.md that exists but does not parse.
type InfoError struct {
	Reason string
}

func (e *InfoError) Error() string { return "DIVERGE.md does not parse: " + e.Reason }

func infoErrorf(format string, args ...any) *InfoError {
	return &InfoError{Reason: fmt.Sprintf(format, args...)}
}

// ReadInfo reads and parses the DIVERGE.md at path: its document, or
// found=false when there is no such file, or an error when it exists but
// cannot be read or parsed.
func ReadInfo(path string) (doc json.RawMessage, found bool, err error) {
	info, found, err := LoadInfo(path)
	return info.Doc, found, err
}

// LoadInfo is ReadInfo returning the whole Info (the gate needs Secrets).
func LoadInfo(path string) (Info, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Info{}, false, nil
	}
	if err != nil {
		return Info{}, true, &InfoError{Reason: err.Error()}
	}
	info, err := ParseInfo(b)
	return info, true, err
}

// ParseInfo parses the text of a DIVERGE.md.
func ParseInfo(b []byte) (Info, error) {
	b = bytes.TrimPrefix(b, []byte("\uFEFF"))
	if !utf8.Valid(b) {
		return Info{}, infoErrorf("the file is not UTF-8 text")
	}
	front, readme, err := splitFrontMatter(string(b))
	if err != nil {
		return Info{}, err
	}
	var members []member
	if front != "" {
		if members, err = frontMatter(front); err != nil {
			return Info{}, err
		}
	}
	info := Info{}
	for _, m := range members {
		switch m.key {
		case "readme":
			return Info{}, infoErrorf(`front matter key "readme" is taken by the Markdown after it`)
		case "secrets":
			if info.Secrets, err = secretNames(m.value); err != nil {
				return Info{}, err
			}
		case "arguments":
			if c := m.value[0]; c != '{' && c != 't' && c != 'f' {
				return Info{}, infoErrorf("arguments must be a JSON Schema (an object or a boolean)")
			}
			info.ArgumentsSchema = m.value
		}
	}
	info.Doc = document(members, readme)
	return info, nil
}

// splitFrontMatter separates the front matter (without its delimiters)
// from the Markdown. A file whose first line is not "---" has none.
func splitFrontMatter(text string) (front, readme string, err error) {
	first, start := lineAt(text, 0)
	if !isDelimiter(first) {
		return "", text, nil
	}
	for i := start; i < len(text); {
		line, next := lineAt(text, i)
		if isDelimiter(line) {
			return text[start:i], text[next:], nil
		}
		i = next
	}
	return "", "", infoErrorf(`the front matter opened by "---" on line 1 is never closed`)
}

// lineAt returns the line starting at i (without its line break) and the
// offset of the next line.
func lineAt(text string, i int) (string, int) {
	j := strings.IndexByte(text[i:], '\n')
	if j < 0 {
		return text[i:], len(text)
	}
	return text[i : i+j], i + j + 1
}

func isDelimiter(line string) bool { return strings.TrimRight(line, " \t\r") == "---" }

// frontMatter parses the YAML into the document's members.
func frontMatter(front string) ([]member, error) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(front), &root); err != nil {
		return nil, infoErrorf("front matter: %v", err)
	}
	n := &root
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == 0 || (n.Kind == yaml.DocumentNode && len(n.Content) == 0) ||
		(n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		return nil, nil // only comments, or nothing
	}
	if resolve(n).Kind != yaml.MappingNode {
		return nil, infoErrorf("front matter must be a mapping of keys, not a %s", kindName(resolve(n)))
	}
	var c converter
	members, err := c.members(resolve(n), 0)
	if err != nil {
		return nil, infoErrorf("front matter: %v", err)
	}
	return members, nil
}

// secretNames checks that value is a list of names usable as environment
// variables (how a stdio program receives them), each declared once.
func secretNames(value json.RawMessage) ([]string, error) {
	var items []any
	if err := json.Unmarshal(value, &items); err != nil || value[0] != '[' {
		return nil, infoErrorf("secrets must be a list of names")
	}
	names := make([]string, 0, len(items))
	seen := map[string]bool{}
	for i, item := range items {
		name, ok := item.(string)
		switch {
		case !ok:
			return nil, infoErrorf("secrets: item %d is not a string", i+1)
		case name == "" || strings.ContainsAny(name, "=\x00"):
			return nil, infoErrorf("secrets: %q cannot be a secret's name", name)
		case seen[name]:
			return nil, infoErrorf("secrets: %q is declared twice", name)
		}
		seen[name] = true
		names = append(names, name)
	}
	return names, nil
}

// document writes the members and the readme as one JSON object.
func document(members []member, readme string) json.RawMessage {
	b := []byte{'{'}
	for _, m := range members {
		b = appendJSONString(b, m.key)
		b = append(append(b, ':'), m.value...)
		b = append(b, ',')
	}
	b = appendJSONString(b, "readme")
	b = append(b, ':')
	b = appendJSONString(b, readme)
	return append(b, '}')
}
