// suspicious.go finds, in an entry's definition, text meant for the
// model rather than the person reading it. Invisible and bidirectional
// control characters hide or reorder what a reviewer sees; tags such as
// <IMPORTANT> are how tool-poisoning attacks give the model orders. The
// console and the log flag both, whether or not the definition changed.

package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// modelTag is an opening or closing tag of the kinds that speak to a model.
var modelTag = regexp.MustCompile(`(?i)<\s*/?\s*(important|system|instructions?|assistant|secret|hidden|admin|note[_-]?to[_-]?(the[_-]?)?(ai|model|assistant))\b[^>]*>`)

// Suspicious returns why def's text looks aimed at the model: each
// invisible or bidirectional-control character (format characters,
// Unicode category Cf, tag characters included) and each model-directed
// tag, with where it is (a JSON pointer). Nil when there is none.
func Suspicious(def json.RawMessage) []string {
	d := json.NewDecoder(bytes.NewReader(def))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	var out []string
	walkStrings(v, "", func(at, s string) {
		for _, r := range s {
			if isInvisible(r) {
				out = append(out, fmt.Sprintf("invisible or bidirectional-control character U+%04X at %s", r, at))
				break
			}
		}
		if m := modelTag.FindString(s); m != "" {
			out = append(out, "a tag aimed at the model ("+strconv.QuoteToASCII(m)+") at "+at)
		}
	})
	return out
}

// walkStrings calls fn with every string in v, keys included, and its
// JSON pointer, in a stable order.
func walkStrings(v any, at string, fn func(at, s string)) {
	switch v := v.(type) {
	case string:
		fn(at, v)
	case []any:
		for i, e := range v {
			walkStrings(e, at+"/"+strconv.Itoa(i), fn)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := at + pointer([]string{k})
			fn(p, k)
			walkStrings(v[k], p, fn)
		}
	}
}

// ShowInvisible is s with each invisible or bidirectional-control
// character written as ⟨U+XXXX⟩, so that a reviewer sees it.
func ShowInvisible(s string) string {
	if !strings.ContainsFunc(s, isInvisible) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isInvisible(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isInvisible(r rune) bool { return unicode.Is(unicode.Cf, r) }
