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
