package mcp

import (
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// An answer finds its call by the number the client wrote as its id; an
// id the client never writes (a string, a sign, a fraction, too long)
// finds none.
func TestAnAnswerFindsItsCallByTheNumberOfItsID(t *testing.T) {
	for id, want := range map[string]int64{"1": 1, "42": 42, "123456789012345678": 123456789012345678} {
		if n, ok := callNumber(jsonrpc.ID(id)); !ok || n != want {
			t.Errorf("callNumber(%s) = %d, %v; want %d", id, n, ok, want)
		}
	}
	for _, id := range []string{"", `"1"`, "-1", "1.5", "1e3", "1234567890123456789", "null"} {
		if n, ok := callNumber(jsonrpc.ID(id)); ok {
			t.Errorf("callNumber(%s) = %d: an id the client never sent found a call", id, n)
		}
	}
}

// HasKey agrees with Key, where a subject or a token id holds the
// separator too.
func TestHasKeyAgreesWithKey(t *testing.T) {
	ids := []Identity{{}, {Subject: "alice"}, {Subject: "alice", TokenID: "t1"}, {Subject: "a\x00b", TokenID: "c"}, {Subject: "a", TokenID: "b\x00c"}}
	for _, a := range ids {
		for _, b := range ids {
			if got, want := a.HasKey(b.Key()), a.Key() == b.Key(); got != want {
				t.Errorf("%q.HasKey(%q) = %v, want %v", a.Key(), b.Key(), got, want)
			}
		}
	}
}
