// errors.go holds the JSON-RPC error object and the codes mcpgate answers
// with. An Error that came from a peer keeps its raw bytes, so relaying it
// writes back exactly what the peer sent — code, message, data and any
// member we do not know.

package jsonrpc

import (
	"encoding/json"
	"fmt"
)

// Standard JSON-RPC codes and the MCP codes in the implementation range.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// CodeRateLimited and CodeForbidden are the call gate's refusals. They
	// are distinct because they ask for different actions: wait and retry,
	// or get a better credential and never retry as is.
	CodeRateLimited = -32000
	CodeForbidden   = -32001
	// CodeResourceNotFound is MCP's code for resources/read of an unknown URI.
	CodeResourceNotFound = -32002
)

// Error is a JSON-RPC error object. It is also a Go error, so a method
// handler returns one to choose the code its caller sees.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`

	raw json.RawMessage // as received from a peer; written back verbatim
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// NewError builds an error whose data is data marshalled to JSON (nil for
// none). Data that cannot be marshalled is dropped rather than failing the
// answer.
func NewError(code int64, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data != nil {
		if raw, ok := data.(json.RawMessage); ok {
			e.Data = raw
		} else if b, err := json.Marshal(data); err == nil {
			e.Data = b
		}
	}
	return e
}

// Errorf builds an error without data.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// RawError wraps an error object received from a peer so that answering with
// it reproduces its bytes. Code and Message are decoded for logs and metrics;
// a raw object that does not decode still relays as is.
func RawError(raw json.RawMessage) *Error {
	e := &Error{raw: raw}
	_ = json.Unmarshal(raw, e)
	e.raw = raw
	return e
}

// Raw returns the bytes the error is written as.
func (e *Error) Raw() json.RawMessage {
	if e.raw != nil {
		return e.raw
	}
	return e.AppendJSON(nil)
}

// AppendJSON appends the error object to b.
func (e *Error) AppendJSON(b []byte) []byte {
	if e.raw != nil {
		return append(b, e.raw...)
	}
	b = append(b, `{"code":`...)
	b = appendInt(b, e.Code)
	b = append(b, `,"message":`...)
	b = AppendString(b, e.Message)
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	return append(b, '}')
}

// ParseError is what Parse reports for input that is not a valid message.
// It carries the code to answer with and, when the id could be read, the id
// to answer to (nil means answer with a null id).
type ParseError struct {
	Code    int64
	Message string
	ID      ID
}

func (e *ParseError) Error() string { return e.Message }

// Response builds the error answer for a message that failed to parse.
func (e *ParseError) Response() []byte {
	return AppendError(nil, e.ID, &Error{Code: e.Code, Message: e.Message})
}
