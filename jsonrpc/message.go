// Package jsonrpc is mcpgate's JSON-RPC 2.0 layer. A message is parsed once
// into an envelope — id, method, and the params, result or error as the raw
// bytes they arrived as — and written back out without touching those bytes.
// That is what lets a relay be faithful: unknown fields, _meta, and integers
// too large for a float64 pass through unchanged, because nothing here ever
// decodes them.
//
// The envelope's raw slices alias the buffer it was parsed from; a caller
// that reuses that buffer must copy the message first (Clone).
package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// ID is the raw JSON of a request id: a number or a string, exactly as the
// peer wrote it, so that it can be echoed verbatim.
type ID []byte

// Key returns the id as a map key; the string and number forms of the same
// digits stay distinct ("1" vs 1).
func (id ID) Key() string { return string(id) }

// IsValid reports whether id is a number or a string.
func (id ID) IsValid() bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// Kind says which of the four JSON-RPC message shapes an envelope has.
type Kind uint8

const (
	KindRequest      Kind = iota + 1 // method and id
	KindNotification                 // method, no id
	KindResult                       // id and result
	KindError                        // id (possibly null) and error
)

// Message is one JSON-RPC 2.0 message. Params, Result and Error are raw
// JSON; absent members are nil.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	// Local is set on an error answer that a client transport made for a
	// call its peer will never answer: the typed failure, for the client
	// to return. It is never encoded.
	Local error
	// Headers are name, value pairs a transport that has headers (HTTP)
	// sends with this request. They are never encoded.
	Headers [][2]string
}

// Kind classifies a parsed message.
func (m *Message) Kind() Kind {
	switch {
	case m.Method != "" && m.ID != nil:
		return KindRequest
	case m.Method != "":
		return KindNotification
	case m.Error != nil:
		return KindError
	default:
		return KindResult
	}
}

// IsRequest reports whether the message expects an answer.
func (m *Message) IsRequest() bool { return m.Kind() == KindRequest }

// Clone returns a copy whose slices no longer alias the parsed buffer.
func (m *Message) Clone() *Message {
	c := *m
	c.ID = bytes.Clone(m.ID)
	c.Params = bytes.Clone(m.Params)
	c.Result = bytes.Clone(m.Result)
	c.Error = bytes.Clone(m.Error)
	return &c
}

// ErrorObject decodes the error member of a KindError message.
func (m *Message) ErrorObject() (*Error, error) {
	var e Error
	if err := json.Unmarshal(m.Error, &e); err != nil {
		return nil, err
	}
	e.raw = m.Error
	return &e, nil
}

// NewResult is the response to id carrying result.
func NewResult(id ID, result json.RawMessage) *Message { return &Message{ID: id, Result: result} }

// NewErrorResponse is the response to id carrying e.
func NewErrorResponse(id ID, e *Error) *Message { return &Message{ID: id, Error: e.Raw()} }
