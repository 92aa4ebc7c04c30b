package store

import (
	"fmt"
	"slices"
	"testing"
	"time"
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
