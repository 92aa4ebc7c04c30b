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
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// modelTag is an opening or closing tag of the kinds that speak to a model.
var modelTag = regexp.MustCompile(`(?i)<\s*/?\s*(important|system|instructions?|assistant|secret|hidden|admin|note[_-]?to[_-]?(the[_-]?)?(ai|model|assistant))\b[^>]*>`)

// Suspicious returns why def's text looks aimed at the model: each
// invisible or bidirectional-control character (format characters,
// Unicode category Cf, tag characters included) and each model-directed
// tag, with where it is (a JSON pointer). Nil when there is none.
func Suspicious(def json.RawMessage) []string {
	if !json.Valid(def) {
		return nil
	}
	var out []string
	walkStrings(def, "", func(at, s string) {
		if r, ok := firstInvisible(s); ok {
			out = append(out, fmt.Sprintf("invisible or bidirectional-control character U+%04X at %s", r, at))
		}
		if m := modelTag.FindString(s); m != "" {
			out = append(out, "a tag aimed at the model ("+strconv.QuoteToASCII(m)+") at "+at)
		}
	})
	return out
}

// walkStrings calls fn with every string in the JSON value v, keys
// included, decoded, and its JSON pointer, in the order they are written.
// It reads v as written, not decoded into maps: every member counts, the
// first of two equal keys too, which some readers keep.
func walkStrings(v json.RawMessage, at string, fn func(at, s string)) {
	switch v = bytes.TrimSpace(v); {
	case len(v) == 0:
	case v[0] == '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			fn(at, s)
		}
	case v[0] == '[':
		var items []json.RawMessage
		_ = json.Unmarshal(v, &items)
		for i, e := range items {
			walkStrings(e, at+"/"+strconv.Itoa(i), fn)
		}
	case v[0] == '{':
		_ = jsonrpc.Members(v, func(k string, e json.RawMessage) bool {
			p := at + pointer([]string{k})
			fn(p, k)
			walkStrings(e, p, fn)
			return true
		})
	}
}

// ShowInvisible is s with each invisible or bidirectional-control
// character written as ⟨U+XXXX⟩, so that a reviewer sees it.
func ShowInvisible(s string) string {
	if _, any := firstInvisible(s); !any {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if invisibleAt(rs, i) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// firstInvisible is the first invisible or bidirectional-control
// character of s, and whether there is one.
func firstInvisible(s string) (rune, bool) {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Cf, r) }) {
		return 0, false // most text: no rune slice made
	}
	rs := []rune(s)
	for i, r := range rs {
		if invisibleAt(rs, i) {
			return r, true
		}
	}
	return 0, false
}

// zeroWidthJoiner joins emoji into one (👩‍💻); anywhere else it hides.
const zeroWidthJoiner = '\u200d'

// invisibleAt reports whether rs[i] is a format character (Unicode
// category Cf, tag characters included) that is not a zero-width joiner
// between two pictographs, as in an emoji sequence (a skin tone or an
// emoji presentation selector may stand between).
func invisibleAt(rs []rune, i int) bool {
	if !unicode.Is(unicode.Cf, rs[i]) {
		return false
	}
	if rs[i] != zeroWidthJoiner || i == 0 || i+1 == len(rs) {
		return true
	}
	before := i - 1
	for before > 0 && (rs[before] == '\ufe0f' || rs[before] == '\ufe0e') {
		before--
	}
	return !pictograph(rs[before]) || !pictograph(rs[i+1])
}

// pictograph reports whether r is an emoji-like symbol: the pictograph
// blocks, skin tones included, and the other symbols (category So).
func pictograph(r rune) bool {
	return r >= 0x1F000 && r <= 0x1FAFF || unicode.Is(unicode.So, r)
}
