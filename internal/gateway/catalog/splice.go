// splice.go rewrites one string member of a raw JSON object in place of
// re-encoding it: a relayed definition or request keeps every other byte
// (unknown fields, _meta, key order, whitespace, big numbers) as the peer
// sent it.

package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// withStringMember returns a copy of obj whose member key has the string
// value v; every other byte is unchanged (jsonrpc.WithStringMember).
func withStringMember(obj []byte, key, v string) ([]byte, error) {
	return jsonrpc.WithStringMember(obj, key, v)
}

// memberValueSpan is the byte span [start, end) of member key's value
// in obj, of any type (see jsonrpc.WithStringMember for the arithmetic).
func memberValueSpan(obj []byte, key string) (start, end int, err error) {
	raw, err := jsonrpc.Lookup(obj, key)
	if err != nil {
		return 0, 0, err
	}
	if len(raw) == 0 {
		return 0, 0, fmt.Errorf("%q: member is missing", key)
	}
	start = cap(obj) - cap(raw)
	return start, start + len(raw), nil
}

// withMember returns a copy of obj whose member key has the raw value v;
// every other byte is unchanged. The member must be present.
func withMember(obj []byte, key string, v json.RawMessage) (json.RawMessage, error) {
	start, end, err := memberValueSpan(obj, key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(obj)-(end-start)+len(v))
	out = append(out, obj[:start]...)
	out = append(out, v...)
	return append(out, obj[end:]...), nil
}

// withProgressToken returns params with params._meta.progressToken set to
// tok; every other byte is unchanged.
func withProgressToken(params []byte, tok json.RawMessage) (json.RawMessage, error) {
	ms, me, err := memberValueSpan(params, "_meta")
	if err != nil {
		return nil, err
	}
	meta, err := withMember(params[ms:me], "progressToken", tok)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(params)-(me-ms)+len(meta))
	out = append(out, params[:ms]...)
	out = append(out, meta...)
	return append(out, params[me:]...), nil
}
