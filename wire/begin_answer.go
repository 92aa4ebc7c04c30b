// begin_answer.go is the answer to a tools begin: [0] and the program's
// register answer (Begun), or [1] and the wire's error value (a second
// begin, or the program's refusal).

package wire

import "encoding/json"

const (
	tagBegun       uint8 = 0
	tagBeginFailed uint8 = 1
)

// BeginAnswer is a tools begin's one response. Error nil means Begun.
type BeginAnswer struct {
	// Answer is the program's register answer JSON, or nil when it has
	// none (no container contract). Meaningful only when Begun.
	Answer json.RawMessage
	// Error is the wire error value (any one JSON value) when the begin
	// failed; nil when it succeeded.
	Error json.RawMessage
}

// Begun reports whether the begin succeeded.
func (a BeginAnswer) Begun() bool { return a.Error == nil }

// Append appends [0][answer] or, when Error is set, [1][error].
func (a BeginAnswer) Append(b []byte) []byte {
	if a.Error != nil {
		return append(append(b, tagBeginFailed), a.Error...)
	}
	return append(append(b, tagBegun), a.Answer...)
}

// DecodeBeginAnswer reads a begin answer payload. Raw fields alias p.
func DecodeBeginAnswer(p []byte) (BeginAnswer, error) {
	if len(p) == 0 {
		return BeginAnswer{}, ErrEmpty
	}
	tag, rest := p[0], p[1:]
	switch tag {
	case tagBegun:
		if len(rest) == 0 {
			return BeginAnswer{}, nil
		}
		answer, err := checkBody(rest)
		return BeginAnswer{Answer: answer}, err
	case tagBeginFailed:
		e, err := checkBody(rest)
		if err != nil {
			return BeginAnswer{}, err
		}
		return BeginAnswer{Error: e}, nil
	}
	return BeginAnswer{}, UnknownTagError{Tag: tag}
}
