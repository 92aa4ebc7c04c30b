// answer.go holds a response to write in parts, so that a large result
// is written from the buffer it arrived in rather than copied behind its
// envelope first.

package jsonrpc

import (
	"encoding/json"
	"io"
)

// An Answer is a response to write. Head is the whole response or, when
// Rest is set, its beginning; Rest and a closing brace follow it. Rest is
// a long result, or its end, left in the buffer it came in. The zero
// Answer is no response (a notification's).
type Answer struct {
	Head []byte
	Rest []byte
}

// answerSplitFrom is the size of result from which ResultAnswer leaves
// it where it is: past it, copying the result (and the garbage the copy
// makes) costs more than one more write does.
const answerSplitFrom = 8 << 10

// SplitsResult reports whether an answer leaves result where it is, so
// that the response's head needs no room for it.
func SplitsResult(result []byte) bool { return len(result) >= answerSplitFrom }

// ResultAnswerFrom is the success response whose beginning, up to rest,
// is head: a long rest is left where it is, a short one appended to head.
func ResultAnswerFrom(head, rest []byte) Answer {
	if SplitsResult(rest) {
		return Answer{Head: head, Rest: rest}
	}
	head = append(head, rest...)
	return Answer{Head: append(head, '}')}
}

// ResultAnswer is the success response carrying result verbatim: one
// buffer for a short result, the envelope and result itself for a long
// one.
func ResultAnswer(id ID, result json.RawMessage) Answer {
	if !SplitsResult(result) {
		return Answer{Head: AppendResult(nil, id, result)}
	}
	return SplitResultAnswer(id, result)
}

// SplitResultAnswer is ResultAnswer with result left where it is,
// whatever its size.
func SplitResultAnswer(id ID, result json.RawMessage) Answer {
	if len(result) == 0 {
		result = json.RawMessage("{}")
	}
	return Answer{Head: AppendResultHead(make([]byte, 0, 40+len(id)), id), Rest: result}
}

// Len is the length of the response written.
func (a Answer) Len() int {
	if a.Rest == nil {
		return len(a.Head)
	}
	return len(a.Head) + len(a.Rest) + 1
}

// Bytes is the response as one slice: Head itself when that is all of it.
func (a Answer) Bytes() []byte {
	if a.Rest == nil {
		return a.Head
	}
	b := make([]byte, 0, a.Len())
	b = append(b, a.Head...)
	b = append(b, a.Rest...)
	return append(b, '}')
}

// closing ends a response written in parts.
var closing = []byte{'}'}

// WriteTo writes the response to w, a part at a time.
func (a Answer) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(a.Head)
	if err != nil || a.Rest == nil {
		return int64(n), err
	}
	m, err := w.Write(a.Rest)
	n += m
	if err != nil {
		return int64(n), err
	}
	m, err = w.Write(closing)
	return int64(n + m), err
}
