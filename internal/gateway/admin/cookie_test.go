package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

func testHandler(t testing.TB) *Handler {
	t.Helper()
	if _, err := New(Options{Source: nil}); err == nil {
		t.Fatal("New without a source")
	}
	key := make([]byte, 32)
	hh, err := New(Options{Source: nopSource{}, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return hh
}

// nopSource is no gateway: only the cookie is under test here.
type nopSource struct{ Source }

// The console's cookie round-trips what it seals, and opens nothing
// else: not a tampered value, not one sealed under another key, not
// garbage.
func TestCookieRoundTripsAndRefusesWhatItDidNotSeal(t *testing.T) {
	h := testHandler(t)
	c := claims{Subject: "ops", Role: "admin", TokenID: "tok_abc", Until: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC), CSRF: "x"}
	v, err := h.seal(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := h.open(v); !ok || got != c {
		t.Fatalf("open(seal(c)) = %+v %v", got, ok)
	}
	other, _ := New(Options{Source: nopSource{}, Key: []byte(strings.Repeat("k", 32))})
	for name, bad := range map[string]string{
		"tampered":       testkit.Tamper(v),
		"another key":    func() string { s, _ := other.seal(c); return s }(),
		"empty":          "",
		"not base64":     "!!!",
		"too short":      "AAAA",
		"no CSRF sealed": func() string { s, _ := h.seal(claims{Subject: "ops", Role: "admin"}); return s }(),
	} {
		if _, ok := h.open(bad); ok {
			t.Errorf("%s: opened", name)
		}
	}
}

func FuzzCookieOpen(f *testing.F) {
	h := testHandler(f)
	sealed := claims{Subject: "s", Role: "admin", CSRF: "c"}
	good, _ := h.seal(sealed) // the only value sealed under this key, in any process

	f.Add(good)
	f.Add("")
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Fuzz(func(t *testing.T, v string) {
		c, ok := h.open(v)
		if ok && c != sealed {
			// Only what this key sealed opens; the fuzzer cannot forge it.
			t.Fatalf("opened %q as %+v", v, c)
		}
	})
}
