// codec_test.go is the property every payload codec shares, checked by
// each codec's fuzz test: a decode never panics and fails only with a
// typed error; whatever decodes re-encodes to bytes that decode to the
// same value; and raw JSON comes back byte for byte.

package wire_test

import (
	"bytes"
	"errors"
	"reflect"
	"regexp"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

// checkCodec runs the shared property on p. exact reports whether v's
// encoding must reproduce p byte for byte (false only for variants that
// ignore trailing bytes or are rebuilt from parts).
func checkCodec[T any](t *testing.T, p []byte, decode func([]byte) (T, error), exact func(T) bool) {
	t.Helper()
	v, err := decode(p)
	if err != nil {
		checkTypedError(t, err)
		return
	}
	q := appendOf(v)
	v2, err := decode(q)
	if err != nil {
		t.Fatalf("re-encoded %q of %q does not decode: %v", q, p, err)
	}
	if !reflect.DeepEqual(v, v2) {
		t.Fatalf("round trip changed the value:\n%#v\n%#v", v, v2)
	}
	if exact(v) && !bytes.Equal(q, p) {
		t.Fatalf("raw payload not byte-identical:\n%q\n%q", p, q)
	}
	if r := appendOf(v2); !bytes.Equal(r, q) {
		t.Fatalf("encoding not stable: %q then %q", q, r)
	}
}

func appendOf(v any) []byte {
	return v.(interface{ Append([]byte) []byte }).Append(nil)
}

var secretsErrorText = regexp.MustCompile(`^wire: secrets did not parse: ` +
	`(invalid JSON|unexpected end of JSON|values are not a JSON object|a value is not a string) at byte \d+$`)

// checkTypedError fails unless err is one of the payload errors; a
// SecretsError's text must be one of the fixed phrases, quoting nothing.
func checkTypedError(t *testing.T, err error) {
	t.Helper()
	var (
		tag  wire.UnknownTagError
		id   wire.ConnectionIDError
		mcp  wire.McpParamsError
		sec  wire.SecretsError
		body wire.BodyError
		srv  wire.ServerRequestError
		req  wire.McpRequestError
	)
	switch {
	case errors.Is(err, wire.ErrEmpty), errors.As(err, &tag), errors.As(err, &id),
		errors.As(err, &mcp), errors.As(err, &body), errors.As(err, &srv), errors.As(err, &req):
	case errors.As(err, &sec):
		if !secretsErrorText.MatchString(err.Error()) {
			t.Fatalf("secrets error says more than it may: %q", err)
		}
	default:
		t.Fatalf("untyped error %T: %v", err, err)
	}
}

func always[T any](T) bool { return true }
