package cluster

import (
	"testing"
	"time"
)

// Every token event comes back as it went: a token created, revoked (to
// the nanosecond), a person's grant revoked (any principal, spaces and
// control bytes included).
func TestTokenEventsRoundTrip(t *testing.T) {
	for _, ev := range []TokenEvent{
		{ID: "tok_abc"},
		{ID: "tok_abc", RevokedAt: time.Date(2026, 12, 6, 10, 0, 0, 123456789, time.UTC)},
		{Principal: "subject:https://idp.example\x01alice smith@example.com"},
		{Principal: "tok_abc"},
	} {
		got, ok := decodeTokenEvent(ev.encode())
		if !ok || got != ev {
			t.Errorf("%+v came back as %+v (%v)", ev, got, ok)
		}
	}
	for _, bad := range []string{"", "created", "created a b", "revoked tok", "revoked tok -1", "principal ", "principal !!", "other x"} {
		if ev, ok := decodeTokenEvent(bad); ok {
			t.Errorf("%q decoded as %+v", bad, ev)
		}
	}
}

// Whatever a message holds, decoding it does not fail badly, and what
// decodes encodes back to itself.
func FuzzTokenEvent(f *testing.F) {
	for _, s := range []string{"created tok_a", "revoked tok_a 1733480000000000000", "principal c3ViamVjdDp4", "principal", "revoked  1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ev, ok := decodeTokenEvent(s)
		if !ok {
			return
		}
		again, ok := decodeTokenEvent(ev.encode())
		if !ok || again != ev {
			t.Fatalf("%q decoded as %+v, which encodes to %q, decoded as %+v (%v)", s, ev, ev.encode(), again, ok)
		}
	})
}
