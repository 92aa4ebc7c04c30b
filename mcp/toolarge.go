// toolarge.go is the answer a client transport delivers for a request
// whose response it refused for its size (a stdio line, an HTTP body, an
// event, a wire frame over the limit): the call fails at once, saying
// why, instead of waiting for an answer that was thrown away.

package mcp

import (
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// TooLargeAnswer is the error response for id, whose answer was over
// limit bytes. Like the HTTP transports' own failures it is -32603 with a
// "transport error: " message and data.reason; data.kind "too_large" and
// data.limit say what happened.
func TooLargeAnswer(id jsonrpc.ID, limit int) *jsonrpc.Message {
	return jsonrpc.NewErrorResponse(id, jsonrpc.NewError(jsonrpc.CodeInternalError,
		fmt.Sprintf("transport error: the answer was larger than the limit of %d bytes", limit),
		map[string]any{"reason": "answer too large", "kind": "too_large", "limit": limit}))
}
