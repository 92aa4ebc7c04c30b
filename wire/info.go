// info.go is the answer to an Info channel request: the image's
// DIVERGE.md, parsed, as a JSON document ([0]); that the image has none
// ([1]); or that it has one that does not parse ([2] and an error value).

package wire

import "encoding/json"

const (
	tagInfoDocument   uint8 = 0
	tagInfoMissing    uint8 = 1
	tagInfoUnreadable uint8 = 2
)

// InfoAnswer is the answer to Info. At most one field is set; none means
// the image has no DIVERGE.md.
type InfoAnswer struct {
	// Document is DIVERGE.md parsed: its front matter's keys and "readme".
	Document json.RawMessage
	// Error is the wire error value when DIVERGE.md exists but does not
	// parse.
	Error json.RawMessage
}

// Missing reports whether the image has no DIVERGE.md.
func (a InfoAnswer) Missing() bool { return a.Document == nil && a.Error == nil }

// Append appends [2][error] when Error is set, else [0][document] when
// Document is, else [1].
func (a InfoAnswer) Append(b []byte) []byte {
	switch {
	case a.Error != nil:
		return append(append(b, tagInfoUnreadable), a.Error...)
	case a.Document != nil:
		return append(append(b, tagInfoDocument), a.Document...)
	}
	return append(b, tagInfoMissing)
}

// DecodeInfoAnswer reads an Info answer payload. Bytes after [1] are
// ignored. Raw fields alias p.
func DecodeInfoAnswer(p []byte) (InfoAnswer, error) {
	if len(p) == 0 {
		return InfoAnswer{}, ErrEmpty
	}
	tag, rest := p[0], p[1:]
	switch tag {
	case tagInfoDocument:
		doc, err := checkBody(rest)
		if err != nil {
			return InfoAnswer{}, err
		}
		return InfoAnswer{Document: doc}, nil
	case tagInfoMissing:
		return InfoAnswer{}, nil
	case tagInfoUnreadable:
		e, err := checkBody(rest)
		if err != nil {
			return InfoAnswer{}, err
		}
		return InfoAnswer{Error: e}, nil
	}
	return InfoAnswer{}, UnknownTagError{Tag: tag}
}
