// parts.go holds a message to write in parts, so that a long result or
// params is written from the buffer it arrived in rather than copied
// behind its envelope first.

package jsonrpc

import (
	"encoding/json"
	"io"
)

// Parts are a message to write. Head is the whole message or, when Rest
// is set, its beginning; Rest and a closing brace follow it. Rest is a
// long result or params, or its end, left in the buffer it came in. The
// zero Parts are no message (the answer to a notification).
type Parts struct {
	Head []byte
	Rest []byte
}

// splitFrom is the size of result or params from which they are left
// where they are: past it, copying them (and the garbage the copy makes)
// costs more than one more write does.
const splitFrom = 8 << 10

// SplitsResult reports whether a response's parts leave result where it
// is, so that the head needs no room for it.
func SplitsResult(result []byte) bool { return len(result) >= splitFrom }

// ResultPartsFrom is the success response whose beginning, up to rest,
// is head: a long rest is left where it is, a short one appended to head.
func ResultPartsFrom(head, rest []byte) Parts {
	if SplitsResult(rest) {
		return Parts{Head: head, Rest: rest}
	}
	head = append(head, rest...)
	return Parts{Head: append(head, '}')}
}

// ResultParts is the success response carrying result verbatim: one
// buffer for a short result, the envelope and result itself for a long
// one.
func ResultParts(id ID, result json.RawMessage) Parts {
	if !SplitsResult(result) {
		return Parts{Head: AppendResult(nil, id, result)}
	}
	return splitResultParts(id, result)
}

// splitResultParts is ResultParts with result left where it is,
// whatever its size.
func splitResultParts(id ID, result json.RawMessage) Parts {
	if len(result) == 0 {
		result = json.RawMessage("{}")
	}
	return Parts{Head: AppendResultHead(make([]byte, 0, 40+len(id)), id), Rest: result}
}

// Len is the length of the message written.
func (a Parts) Len() int { return len(a.Head) + len(a.Rest) + len(a.Tail()) }

// Bytes is the message as one slice: Head itself when that is all of it.
func (a Parts) Bytes() []byte {
	if a.Rest == nil {
		return a.Head
	}
	return append(append(append(make([]byte, 0, a.Len()), a.Head...), a.Rest...), a.Tail()...)
}

// closing ends a message written in parts.
var closing = []byte{'}'}

// Tail is what follows Rest: the closing brace, or nothing when Head is
// the whole message.
func (a Parts) Tail() []byte {
	if a.Rest == nil {
		return nil
	}
	return closing
}

// WriteTo writes the message to w, a part at a time.
func (a Parts) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range [3][]byte{a.Head, a.Rest, a.Tail()} {
		if len(p) == 0 {
			continue
		}
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Parts are m as Append writes it, in parts: a request's or a
// notification's long params are left where they are.
func (m *Message) Parts() Parts {
	if len(m.Params) < splitFrom {
		return Parts{Head: m.Append(nil)}
	}
	return m.splitParts()
}

// splitParts is Parts with any params left where they are, whatever
// their size.
func (m *Message) splitParts() Parts {
	if k := m.Kind(); (k != KindRequest && k != KindNotification) || len(m.Params) == 0 {
		return Parts{Head: m.Append(nil)}
	}
	return Parts{Head: appendRequestHead(make([]byte, 0, 48+len(m.ID)+len(m.Method)), m.ID, m.Method), Rest: m.Params}
}
