// toolarge.go is the failure a client transport delivers for a call it will
// never see answered. The stream broke, the server refused the POST, or the
// answer was over the size limit: a stdio line, an HTTP body, an event, a
// wire frame. The call fails at once, saying why, instead of waiting for an
// answer that will not come.

package mcp

import (
	"fmt"
	"net/http"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// TransportError is a call's failure that its client transport made, not
// its server. Client.Call returns it; it unwraps to the JSON-RPC error a
// caller is shown (-32603, data.reason, data.httpStatus, data.kind and
// data.limit where they apply). Tell it from a server's own error with
// errors.As, never by the message.
type TransportError struct {
	// Reason says why, in a few words.
	Reason string
	// HTTPStatus is the status the server answered, 0 when the failure
	// was not an HTTP answer.
	HTTPStatus int
	// Kind is KindTooLarge for an answer over Limit bytes, "" otherwise.
	Kind  ErrorKind
	Limit int
}

func (e *TransportError) Error() string {
	switch {
	case e.Kind == KindTooLarge:
		return fmt.Sprintf("transport error: the answer was larger than the limit of %d bytes", e.Limit)
	case e.HTTPStatus != 0:
		return fmt.Sprintf("transport error: HTTP %d %s: %s", e.HTTPStatus, http.StatusText(e.HTTPStatus), e.Reason)
	}
	return "transport error: " + e.Reason
}

// Unwrap is the JSON-RPC error a caller is shown.
func (e *TransportError) Unwrap() error { return e.RPCError() }

// RPCError is the JSON-RPC error a caller is shown.
func (e *TransportError) RPCError() *jsonrpc.Error {
	data := map[string]any{"reason": e.Reason}
	if e.HTTPStatus != 0 {
		data["httpStatus"] = e.HTTPStatus
	}
	if e.Kind != "" {
		data["kind"] = e.Kind
		data["limit"] = e.Limit
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, e.Error(), data)
}

// Answer is the error response a transport delivers for id: the bytes a
// caller is shown, and e itself for Client.Call to return.
func (e *TransportError) Answer(id jsonrpc.ID) *jsonrpc.Message {
	m := jsonrpc.NewErrorResponse(id, e.RPCError())
	m.Local = e
	return m
}

// TooLargeAnswer is the error response for id, whose answer was over
// limit bytes.
func TooLargeAnswer(id jsonrpc.ID, limit int) *jsonrpc.Message {
	return (&TransportError{Reason: "answer too large", Kind: KindTooLarge, Limit: limit}).Answer(id)
}
