package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutsKeepWholeCharacters(t *testing.T) {
	for _, tc := range []struct {
		name, s      string
		n            int
		bytes, runes string
	}{
		{"short enough", "abc", 3, "abc", "abc"},
		{"ASCII cut", "abcdef", 4, "abcd", "abc…"},
		{"a two-byte character not split", "aé", 2, "a", "aé"},
		{"a four-byte character not split", "x😀y", 4, "x", "x😀y"},
		{"characters counted, not bytes", "😀😀😀", 2, "", "😀…"},
		{"nothing fits", "é", 1, "", "é"},
		{"zero", "abc", 0, "", "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Bytes(tc.s, tc.n); got != tc.bytes {
				t.Errorf("Bytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.bytes)
			}
			if got := Runes(tc.s, tc.n); got != tc.runes {
				t.Errorf("Runes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.runes)
			}
		})
	}
	if got := Valid("ab\xffcd", 4); got != "ab\uFFFDc" {
		t.Errorf("Valid = %q: an invalid byte is replaced after the cut", got)
	}
}

// Whatever the text: Bytes is a prefix of at most n bytes that splits no
// character a valid text holds, Valid is valid UTF-8, and Runes holds at
// most n characters.
func FuzzCuts(f *testing.F) {
	f.Add("x😀y", 3)
	f.Add("ab\xffcd", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n % 64
		if n < 0 {
			n = -n
		}
		b := Bytes(s, n)
		if !strings.HasPrefix(s, b) || len(b) > n && len(s) > n {
			t.Fatalf("Bytes(%q, %d) = %q", s, n, b)
		}
		if utf8.ValidString(s) && !utf8.ValidString(b) {
			t.Fatalf("Bytes(%q, %d) = %q splits a character", s, n, b)
		}
		if v := Valid(s, n); !utf8.ValidString(v) {
			t.Fatalf("Valid(%q, %d) = %q is not valid UTF-8", s, n, v)
		}
		if n > 0 && utf8.RuneCountInString(Runes(s, n)) > n {
			t.Fatalf("Runes(%q, %d) = %q: more than %d characters", s, n, Runes(s, n), n)
		}
	})
}

func TestPlainTextIsUTF8WithoutControlCharacters(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		plain   bool
	}{
		{"ASCII", "search_docs", true},
		{"letters beyond ASCII", "ünïcode ✓ 😀", true},
		{"empty", "", true},
		{"a NUL", "a\x00b", false},
		{"a line break", "a\nb", false},
		{"a tab", "a\tb", false},
		{"DEL", "a\x7fb", false},
		{"a C1 control", "a\u0085b", false},
		{"an ANSI escape", "\x1b[31mred", false},
		{"a stray byte", "a\xffb", false},
		{"a surrogate's bytes", "a\xed\xa0\x80b", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Plain(tc.s); got != tc.plain {
				t.Errorf("Plain(%q) = %v, want %v", tc.s, got, tc.plain)
			}
		})
	}
}
