package metrics

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A label is cut to maxLabelBytes on a character boundary and is always
// valid UTF-8, which Prometheus requires (it panics otherwise).
func TestLabelIsBoundedAndValidUTF8(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"short", "view_echo"},
		{"long ascii", strings.Repeat("a", 1000)},
		{"long multibyte", strings.Repeat("é", 200)},
		{"invalid bytes", "tool\xff\xfe"},
	} {
		got := label(c.in)
		if len(got) > maxLabelBytes+len("\uFFFD") || !utf8.ValidString(got) {
			t.Errorf("%s: label = %q (%d bytes)", c.name, got, len(got))
		}
		if len(c.in) <= maxLabelBytes && utf8.ValidString(c.in) && got != c.in {
			t.Errorf("%s: label changed a short valid name to %q", c.name, got)
		}
	}
}

// A backend may answer any integer code: after maxCodes distinct ones the
// rest share "other", while the ones already seen keep their own label.
func TestErrorCodesAreBounded(t *testing.T) {
	c := newCodeSet(3)
	for code := int64(1); code <= 3; code++ {
		if got := c.label(code); got != errorCode(code) {
			t.Fatalf("code %d: %q", code, got)
		}
	}
	if got := c.label(4); got != other {
		t.Errorf("fourth distinct code: %q, want %q", got, other)
	}
	if got := c.label(2); got != "2" {
		t.Errorf("a code already seen: %q, want \"2\"", got)
	}
}
