// splice.go rewrites one string member of a raw JSON object in place of
// re-encoding it: a relayed definition or request keeps every other byte
// (unknown fields, _meta, key order, whitespace, big numbers) as the peer
// sent it.

package relay

import (
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// errNoStringMember is returned when the member to rewrite is absent or not
// a string.
var errNoStringMember = errors.New("member is missing or not a string")

// memberSpan returns the byte span [start, end) of member key's value in
// obj. jsonrpc.Lookup returns a subslice of obj, and a subslice obj[i:j]
// has cap(obj)-i capacity, so the offset falls out of the capacities
// without a second scan.
func memberSpan(obj []byte, key string) (start, end int, err error) {
	raw, err := jsonrpc.Lookup(obj, key)
	if err != nil {
		return 0, 0, err
	}
	if len(raw) == 0 || raw[0] != '"' {
		return 0, 0, fmt.Errorf("%q: %w", key, errNoStringMember)
	}
	start = cap(obj) - cap(raw)
	return start, start + len(raw), nil
}

// withStringMember returns a copy of obj whose member key has the string
// value v; every other byte is unchanged.
func withStringMember(obj []byte, key, v string) ([]byte, error) {
	start, end, err := memberSpan(obj, key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(obj)-(end-start)+len(v)+2)
	out = append(out, obj[:start]...)
	out = jsonrpc.AppendString(out, v)
	return append(out, obj[end:]...), nil
}
