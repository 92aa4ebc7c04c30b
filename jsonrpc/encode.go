// encode.go writes envelopes. Raw members are appended as they are; only
// the envelope's own punctuation is produced here, so an answer costs one
// buffer append and no reflection.

package jsonrpc

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// AppendRequest appends a request (or, with a nil id, a notification).
func AppendRequest(b []byte, id ID, method string, params json.RawMessage) []byte {
	if b == nil {
		b = make([]byte, 0, 48+len(id)+len(method)+len(params))
	}
	if len(params) > 0 {
		b = append(appendRequestHead(b, id, method), params...)
		return append(b, '}')
	}
	return append(appendRequestStart(b, id, method), '}')
}

// appendRequestHead appends a request up to its params, which the caller
// appends, then the closing '}'.
func appendRequestHead(b []byte, id ID, method string) []byte {
	return append(appendRequestStart(b, id, method), `,"params":`...)
}

// appendRequestStart appends a request's members but its params.
func appendRequestStart(b []byte, id ID, method string) []byte {
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	return AppendString(b, method)
}

// AppendResult appends a success response carrying result verbatim.
func AppendResult(b []byte, id ID, result json.RawMessage) []byte {
	if b == nil {
		b = make([]byte, 0, 40+len(id)+len(result))
	}
	b = AppendResultHead(b, id)
	if len(result) == 0 {
		result = json.RawMessage("{}")
	}
	b = append(b, result...)
	return append(b, '}')
}

// AppendResultHead appends a response up to its result: the caller
// appends the result, then the closing '}'. It lets a result be written
// straight into the response, not built apart and then copied.
func AppendResultHead(b []byte, id ID) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, id)
	return append(b, `,"result":`...)
}

// AppendError appends an error response. A nil id is written as null, as
// JSON-RPC asks when the request's id could not be read.
func AppendError(b []byte, id ID, e *Error) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, id)
	b = append(b, `,"error":`...)
	b = e.AppendJSON(b)
	return append(b, '}')
}

// Append appends m in canonical envelope form.
func (m *Message) Append(b []byte) []byte {
	switch m.Kind() {
	case KindRequest, KindNotification:
		return AppendRequest(b, m.ID, m.Method, m.Params)
	case KindError:
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = appendID(b, m.ID)
		b = append(b, `,"error":`...)
		b = append(b, m.Error...)
		return append(b, '}')
	default:
		return AppendResult(b, m.ID, m.Result)
	}
}

func appendID(b []byte, id ID) []byte {
	if id == nil {
		return append(b, "null"...)
	}
	return append(b, id...)
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// AppendStringBytes is AppendString of s given as bytes, without making
// a string of it when it needs no escape (the common case: a member's key).
func AppendStringBytes(b []byte, s []byte) []byte {
	for _, c := range s {
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return AppendString(b, string(s))
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// AppendString appends s as a JSON string. Unlike strconv.Quote it uses only
// JSON's escapes, and like encoding/json it escapes <, > and & so the output
// is safe inside HTML and replaces invalid UTF-8 with U+FFFD.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
