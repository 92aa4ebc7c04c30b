// Package textcut bounds text on a character boundary: an audit column, a
// metric label, a span attribute, a key quoted in a refusal, an error's
// detail. A cut never splits a character.
package textcut

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bytes is s cut to at most n bytes, on a character boundary: the longest
// prefix that ends where a character begins.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}

// Valid is Bytes, then each invalid byte sequence replaced by U+FFFD:
// what Prometheus requires of a label value and OTLP of a string.
func Valid(s string, n int) string {
	return strings.ToValidUTF8(Bytes(s, n), "\uFFFD")
}

// Plain reports whether s is UTF-8 without a control character: text
// that every reader reads alike, that prints as one line and that every
// store holds.
func Plain(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// Runes is s bounded to n characters; a cut is marked with "…", which
// counts towards the n.
func Runes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + "…"
}
