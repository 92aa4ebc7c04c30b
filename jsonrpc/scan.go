// scan.go is a validating JSON skimmer: it finds where a value ends without
// building it. The envelope parser uses it so that params, result and error
// stay slices of the bytes that arrived: nothing decoded, nothing
// re-encoded, no field or digit lost. Malformed input is still rejected
// exactly where encoding/json would reject it. A message is validated
// once; the walks after that (the parser's own reading of the members,
// every lookup) skip values with skipValid, which trusts what was checked.

package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"unicode/utf8"
)

// maxDepth bounds nesting the way encoding/json does, so a hostile
// "[[[[…" cannot exhaust the stack.
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value starting at b[i]
// (no leading whitespace).
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch c := b[i]; {
	case c == '{':
		return skipObject(b, i, depth+1)
	case c == '[':
		return skipArray(b, i, depth+1)
	case c == '"':
		end, _, err := skipString(b, i)
		return end, err
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return 0, errSyntax
}

// skipValid returns the index just past the value starting at b[i], in
// b known to be valid JSON: checked by skipValue before, or promised by
// the caller (Lookup's contract). It checks nothing and only finds the
// end: a string's closing quote, the bracket closing a container, the
// byte after a number or literal. A relayed call's long strings are so
// skipped at memory speed, by the walks after the one that validated them.
// On input that is not valid JSON it still ends, within b.
func skipValid(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipValidString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipValidString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return len(b)
}

// skipValidString is skipValid for the string at b[i]: the first quote
// after it that an even number of backslashes precedes closes it.
func skipValidString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, errSyntax
	}
	return i + len(lit), nil
}

func skipObject(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errSyntax
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errSyntax
		}
		end, _, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, errSyntax
		}
		i = skipSpace(b, i+1)
		if i, err = skipValue(b, i, depth); err != nil {
			return 0, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, errSyntax
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

func skipArray(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errSyntax
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = skipValue(b, i, depth); err != nil {
			return 0, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, errSyntax
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

// skipString returns the index past the closing quote and whether the
// string's raw bytes may differ from its value: it held escapes, or bytes
// outside ASCII (invalid UTF-8 decodes to U+FFFD).
//
// It reads eight bytes at a time up to the first quote, backslash or
// control character (stopAt), which the byte loop then handles: a relayed
// result's long strings are skipped by every lookup of a member after
// them.
func skipString(b []byte, i int) (end int, escaped bool, err error) {
	i++
	for {
		for words := 0; i+8 <= len(b); {
			w := binary.LittleEndian.Uint64(b[i:])
			stop := stopAt(w)
			if stop == 0 {
				escaped = escaped || w&highBits != 0
				i += 8
				if words++; words == 4 {
					// A long plain run: plainRun finds its end faster.
					var high bool
					i, high = plainRun(b, i)
					escaped = escaped || high
					break
				}
				continue
			}
			n := bits.TrailingZeros64(stop) // bit 7 of the first stop byte
			escaped = escaped || w&highBits&(1<<n-1) != 0
			i += n >> 3
			break
		}
		if i >= len(b) {
			return 0, false, errSyntax
		}
		var done, esc bool
		if i, done, esc, err = stringByte(b, i); err != nil {
			return 0, false, err
		}
		escaped = escaped || esc
		if done {
			return i, escaped, nil
		}
	}
}

// plainRun returns the index of the first quote, backslash or control
// character at or after i (len(b) when there is none), and whether a byte
// outside ASCII comes before it. bytes.IndexByte finds the quote and the
// backslash; the bytes before them are checked for control characters
// only, eight at a time (the lowest mark is exact, as in stopAt).
func plainRun(b []byte, i int) (int, bool) {
	end := len(b)
	if q := bytes.IndexByte(b[i:], '"'); q >= 0 {
		end = i + q
	}
	if s := bytes.IndexByte(b[i:end], '\\'); s >= 0 {
		end = i + s
	}
	var high uint64
	for ; i+8 <= end; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if c := (w - lowBits*0x20) &^ w & highBits; c != 0 {
			n := bits.TrailingZeros64(c)
			return i + n>>3, high|w&highBits&(1<<n-1) != 0
		}
		high |= w & highBits
	}
	for ; i < end; i++ {
		switch c := b[i]; {
		case c < 0x20:
			return i, high != 0
		case c >= utf8.RuneSelf:
			high = highBits
		}
	}
	return end, high != 0
}

// stringByte reads the string's byte (or escape) at i: it returns the index
// past it, whether it closed the string, and whether the string's bytes
// may differ from its value because of it.
func stringByte(b []byte, i int) (next int, done, escaped bool, err error) {
	switch c := b[i]; {
	case c == '"':
		return i + 1, true, false, nil
	case c == '\\':
		if i+1 >= len(b) {
			return 0, false, false, errSyntax
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return i + 2, false, true, nil
		case 'u':
			if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return 0, false, false, errSyntax
			}
			return i + 6, false, true, nil
		}
		return 0, false, false, errSyntax
	case c < 0x20:
		return 0, false, false, errSyntax
	case c < utf8.RuneSelf:
		return i + 1, false, false, nil
	}
	// Invalid UTF-8 is kept as it came (we never rewrite relayed bytes),
	// but its decoded value differs from its bytes.
	return i + 1, false, true, nil
}

// Eight bytes at once, little-endian: each byte of lowBits is 1, and each
// of highBits is 0x80.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// stopAt marks, with its bit 7, each byte of w that ends a string's plain
// run: a quote, a backslash or a control character. The lowest mark is
// always exact (a higher one may be a borrow's false mark), which is all
// skipString reads. (x-lowBits)&^x has bit 7 set where x has a zero byte;
// with 0x20 for lowBits, where it has a byte below 0x20.
func stopAt(w uint64) uint64 {
	q := w ^ (lowBits * '"')
	s := w ^ (lowBits * '\\')
	return ((q-lowBits)&^q | (s-lowBits)&^s | (w-lowBits*0x20)&^w) & highBits
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func skipNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return 0, errSyntax
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return 0, errSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == start {
			return 0, errSyntax
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == start {
			return 0, errSyntax
		}
	}
	return i, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Valid reports whether b is exactly one JSON value, surrounded by optional
// whitespace.
func Valid(b []byte) bool {
	i := skipSpace(b, 0)
	end, err := skipValue(b, i, 0)
	return err == nil && skipSpace(b, end) == len(b)
}
