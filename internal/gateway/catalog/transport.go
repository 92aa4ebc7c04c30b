// transport.go tells a backend's own JSON-RPC error, which the relay passes
// on verbatim, from one the client transport made up for a request the
// backend will never answer (the HTTP transports answer a call locally when
// its response stream breaks or the server refuses the POST, so that no
// caller hangs). The latter means the backend could not be reached, and
// becomes -32603 with data.backend like any other such failure: a client
// must be able to tell which backend failed.

package catalog

import (
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// transportPrefix begins the message of every error the client transports
// answer on their own (mcphttp's failedCall); the gateway tests kill a
// backend mid-call to pin the two together.
const transportPrefix = "transport error: "

// transportFailure reports whether e was made up by the client transport:
// -32603, the transport's message, and data holding its "reason". A
// backend sending exactly that shape is taken for unreachable, which is
// the lesser mistake.
func transportFailure(e *jsonrpc.Error) bool {
	if e.Code != jsonrpc.CodeInternalError || !strings.HasPrefix(e.Message, transportPrefix) {
		return false
	}
	_, ok := jsonrpc.LookupString(e.Data, "reason")
	return ok
}

// tooLarge reports whether e is a transport's refusal of an answer over
// its size limit (mcp.TooLargeAnswer), and the limit.
func tooLarge(e *jsonrpc.Error) (limit string, ok bool) {
	if e == nil {
		return "", false
	}
	if kind, _ := jsonrpc.LookupString(e.Data, "kind"); kind != "too_large" {
		return "", false
	}
	raw, _ := jsonrpc.Lookup(e.Data, "limit")
	return string(raw), len(raw) > 0
}
