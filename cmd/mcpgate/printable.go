// printable.go makes a value safe to print on an operator's terminal. What
// the CLI prints from the store came from callers (a JWT's sub, a tool's
// name, a token's name): a newline in one forged a whole row of
// `mcpgate audit tail`, and an ANSI escape reached the terminal itself.

package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printable returns s with every character that could change what a
// terminal shows escaped the way Go writes it (\n, \t, \x1b, \u202e). These
// are C0 and C1 controls, DEL, Unicode format characters (bidirectional
// overrides among them), invalid UTF-8, and the backslash. An escape that
// was in s so cannot be told from one printable added. Any other text is
// unchanged.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i]), 16))
		case r == '\\':
			b.WriteString(`\\`)
		case needsEscape(r):
			q := strconv.QuoteRuneToASCII(r) // 'x' with the escape inside
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return r == '\\' || r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) ||
		r == '\u2028' || r == '\u2029'
}
