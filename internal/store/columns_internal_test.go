package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A record's text columns are boxed once: a record like the last ones
// allocates only for its time and duration, and its values are the
// record's own, in AuditColumns' order.
func TestAuditValuesBoxRepeatedTextOnce(t *testing.T) {
	r := AuditRecord{Time: time.Unix(1700000000, 5), Subject: "tok:abc", TokenID: "abc", Role: "admin", Kind: "tool",
		Name: "echo", Backend: "fx", Outcome: "ok", Code: 0, Duration: 1500 * time.Microsecond, Rule: "r1"}
	args := make([]any, 0, len(AuditColumnList))
	want := []any{EncodeTime(r.Time), "tok:abc", "abc", "admin", "tool", "echo", "fx", "ok", int64(0), int64(1500), "", "", "r1", "", ""}
	if got := AppendAuditValues(args, r); !slices.Equal(got, want) {
		t.Fatalf("values %v, want %v", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { AppendAuditValues(args[:0], r) }); n > 2 {
		t.Errorf("a repeated record's values: %v allocations, want at most 2 (its time and duration)", n)
	}
}

// The kept boxes are bounded: a stream of distinct values empties them.
func TestAuditValueBoxesStayBounded(t *testing.T) {
	var b boxes
	b.m = map[string]any{}
	for i := range maxBoxes + 100 {
		s := fmt.Sprint("subject-", i)
		if v := b.of(s); v != s {
			t.Fatalf("boxed %q as %v", s, v)
		}
		if len(b.m) > maxBoxes {
			t.Fatalf("%d values kept, more than %d", len(b.m), maxBoxes)
		}
	}
}

// Storable's text is always what every store holds, UTF-8 without a NUL;
// text that already is comes back unchanged, and so does its result.
func FuzzStorable(f *testing.F) {
	for _, s := range []string{"", "search", "ünï ✓", "a\x00b", "a\xffb", "\xed\xa0\x80", "\xc0\xaf", "\x00\x00", "\uFFFD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Storable(s)
		if !utf8.ValidString(got) || strings.IndexByte(got, 0) >= 0 {
			t.Fatalf("Storable(%q) = %q: not storable", s, got)
		}
		if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 && got != s {
			t.Fatalf("Storable(%q) = %q: changed storable text", s, got)
		}
		if again := Storable(got); again != got {
			t.Fatalf("Storable(%q) = %q, then %q", s, got, again)
		}
	})
}
