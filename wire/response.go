// response.go is the MCP response frame, shared by the per-path form and
// the framed MCP channels: [0] and the MCP server's result, or [1] and its
// JSON-RPC error object. Both go through unchanged — the result's every
// byte, the error's code, message and data — because a relay that
// re-encoded them would drop what it does not know and flatten codes an
// agent acts on.

package wire

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

const (
	tagResult uint8 = 0
	tagError  uint8 = 1
)

// Response is one MCP answer. Exactly one of Result and Error is set.
// On a notification stream, Result is the notification's JSON.
type Response struct {
	// Result is the MCP server's result JSON, byte for byte.
	Result json.RawMessage
	// Error is the MCP server's error object (MCP's ErrorData: code,
	// message, data). Decoded ones keep their raw bytes, so writing them
	// back (Append, jsonrpc.AppendError) reproduces what arrived.
	Error *jsonrpc.Error
}

// ErrorResponse builds a [1] answer of this side's own making.
func ErrorResponse(code int64, message string) Response {
	return Response{Error: &jsonrpc.Error{Code: code, Message: message}}
}

// Append appends [0][result], or [1][error] when Error is set.
func (r Response) Append(b []byte) []byte {
	if r.Error != nil {
		return r.Error.AppendJSON(append(b, tagError))
	}
	return append(append(b, tagResult), r.Result...)
}

// DecodeResponse reads a response frame: the result must be JSON; the
// error an object with an integer "code" and a string "message". Raw
// fields alias p.
func DecodeResponse(p []byte) (Response, error) {
	if len(p) == 0 {
		return Response{}, ErrEmpty
	}
	tag, rest := p[0], p[1:]
	switch tag {
	case tagResult:
		result, err := checkBody(rest)
		if err != nil {
			return Response{}, err
		}
		return Response{Result: result}, nil
	case tagError:
		e, err := decodeErrorData(rest)
		if err != nil {
			return Response{}, BodyError{Err: err}
		}
		return Response{Error: e}, nil
	}
	return Response{}, UnknownTagError{Tag: tag}
}

func decodeErrorData(b []byte) (*jsonrpc.Error, error) {
	if err := checkJSON(b); err != nil {
		return nil, err
	}
	if err := requireObject(b, "error"); err != nil {
		return nil, err
	}
	code := member(b, "code")
	if code == nil {
		return nil, errors.New(`missing field "code"`)
	}
	if _, err := strconv.ParseInt(string(code), 10, 64); err != nil {
		return nil, errors.New(`field "code" must be an integer`)
	}
	if err := requireString(b, "message"); err != nil {
		return nil, err
	}
	return jsonrpc.RawError(b), nil
}
