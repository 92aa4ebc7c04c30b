// secrets.go is the secrets feed: the channel request that carries the
// secrets' values (tag 8) and its answer, Fed or the program's refusal.
// Values must never reach a log line or an error message, so the decode
// errors quote nothing and the request's printed forms are redacted.

package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
)

// Secrets feeds the secrets' values to the program (tag 8): every name the
// program declared, mapped to its value.
type Secrets struct {
	Values map[string]string
	// Raw is the values JSON as it arrived. When set, Append writes it
	// instead of encoding Values, so a relay forwards the bytes it got.
	Raw json.RawMessage
}

// Append appends the tag and the values JSON: Raw when set, else Values
// encoded (nil Values as {}).
func (r Secrets) Append(b []byte) []byte {
	b = append(b, tagSecrets)
	if r.Raw != nil {
		return append(b, r.Raw...)
	}
	if r.Values == nil {
		return append(b, "{}"...)
	}
	enc, _ := json.Marshal(r.Values) // a map of strings always encodes
	return append(b, enc...)
}

// String names how many secrets there are and none of their values.
func (r Secrets) String() string { return fmt.Sprintf("wire.Secrets{%d values}", len(r.Values)) }

// GoString is String, so that %#v redacts too.
func (r Secrets) GoString() string { return r.String() }

// LogValue keeps the values out of slog output.
func (r Secrets) LogValue() slog.Value { return slog.IntValue(len(r.Values)) }

// decodeSecrets reads the values JSON: an object whose every value is a
// string. Duplicate names keep the last value, as encoding/json does.
func decodeSecrets(b []byte) (ChannelRequest, error) {
	if !json.Valid(b) {
		return nil, secretsSyntaxError(b)
	}
	start := int64(len(b) - len(bytes.TrimLeft(b, " \t\r\n")))
	if kindOf(b) != '{' {
		return nil, SecretsError{Offset: start, Reason: "values are not a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.Token() // the '{'; b is valid, so no token below fails
	values := map[string]string{}
	for dec.More() {
		key, _ := dec.Token()
		at := valueStart(b, dec.InputOffset())
		v, _ := dec.Token()
		s, ok := v.(string)
		if !ok {
			return nil, SecretsError{Offset: at, Reason: "a value is not a string"}
		}
		values[key.(string)] = s
	}
	return Secrets{Values: values, Raw: b}, nil
}

// secretsSyntaxError reports where b stops being JSON, and nothing of what
// it found there.
func secretsSyntaxError(b []byte) SecretsError {
	var v struct{}
	var se *json.SyntaxError
	if err := json.Unmarshal(b, &v); errors.As(err, &se) && se.Offset < int64(len(b)) {
		return SecretsError{Offset: se.Offset, Reason: "invalid JSON"}
	}
	return SecretsError{Offset: int64(len(b)), Reason: "unexpected end of JSON"}
}

// valueStart skips the colon and whitespace after an object key that ends
// at off.
func valueStart(b []byte, off int64) int64 {
	for off < int64(len(b)) && bytes.IndexByte([]byte(" \t\r\n:"), b[off]) >= 0 {
		off++
	}
	return off
}

const (
	tagFed            uint8 = 0
	tagSecretsRefused uint8 = 1
)

// SecretsAnswer is the answer to a secrets feed. Error nil means Fed.
type SecretsAnswer struct {
	// Error is the program's refusal, a wire error value (any one JSON
	// value); nil when the secrets were fed.
	Error json.RawMessage
}

// Fed reports whether the program took the secrets.
func (a SecretsAnswer) Fed() bool { return a.Error == nil }

// Append appends [0], or [1][error] when Error is set.
func (a SecretsAnswer) Append(b []byte) []byte {
	if a.Error != nil {
		return append(append(b, tagSecretsRefused), a.Error...)
	}
	return append(b, tagFed)
}

// DecodeSecretsAnswer reads a secrets answer payload. Bytes after a Fed's
// tag are ignored. Raw fields alias p.
func DecodeSecretsAnswer(p []byte) (SecretsAnswer, error) {
	if len(p) == 0 {
		return SecretsAnswer{}, ErrEmpty
	}
	switch p[0] {
	case tagFed:
		return SecretsAnswer{}, nil
	case tagSecretsRefused:
		e, err := checkBody(p[1:])
		if err != nil {
			return SecretsAnswer{}, err
		}
		return SecretsAnswer{Error: e}, nil
	}
	return SecretsAnswer{}, UnknownTagError{Tag: p[0]}
}
