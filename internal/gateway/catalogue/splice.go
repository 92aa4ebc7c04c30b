// splice.go sets the progress token of a relayed request in place of
// re-encoding it (jsonrpc's splices): every other byte (unknown fields,
// _meta, key order, whitespace, big numbers) stays as the caller sent it.

package catalogue

import (
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// withProgressToken returns params with params._meta.progressToken set to
// tok; every other byte is unchanged.
func withProgressToken(params []byte, tok json.RawMessage) (json.RawMessage, error) {
	ms, me, err := jsonrpc.ValueSpan(params, "_meta")
	if err != nil {
		return nil, err
	}
	meta, err := jsonrpc.WithMember(params[ms:me], "progressToken", tok)
	if err != nil {
		return nil, err
	}
	return jsonrpc.Splice(params, ms, me, meta), nil
}
