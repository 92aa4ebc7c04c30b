// json.go holds the few JSON checks the payload codecs share. They
// validate and look inside raw JSON without decoding or re-encoding it:
// the bytes a payload carries are the bytes it relays.

package wire

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// checkJSON reports whether b is exactly one JSON value. The error is
// encoding/json's own (a *json.SyntaxError), which may quote a byte of b.
func checkJSON(b []byte) error {
	if json.Valid(b) {
		return nil
	}
	var v struct{}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON") // not reached: Unmarshal rejects what Valid does
}

// kindOf returns the first byte of the valid JSON value b after any
// whitespace: '{', '[', '"', 'n', 't', 'f', '-' or a digit.
func kindOf(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// kindName names a JSON value's kind for a parse error.
func kindName(k byte) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// requireObject checks that the valid JSON b is an object.
func requireObject(b []byte, what string) error {
	if k := kindOf(b); k != '{' {
		return fmt.Errorf("%s must be an object, got %s", what, kindName(k))
	}
	return nil
}

// member returns member key of the valid JSON object obj (nil if absent).
func member(obj []byte, key string) json.RawMessage {
	v, _ := jsonrpc.Lookup(obj, key) // obj is a valid object: Lookup cannot fail
	return v
}

// requireString checks that member key of obj is present and a string.
func requireString(obj []byte, key string) error {
	v := member(obj, key)
	if v == nil {
		return fmt.Errorf("missing field %q", key)
	}
	if v[0] != '"' {
		return fmt.Errorf("field %q must be a string, got %s", key, kindName(v[0]))
	}
	return nil
}

// stringMember returns member key of obj, which must be a string.
func stringMember(obj []byte, key string) (string, error) {
	if err := requireString(obj, key); err != nil {
		return "", err
	}
	s, _ := jsonrpc.LookupString(obj, key)
	return s, nil
}

// optionalMember checks that member key of obj is absent, null, or of the
// kind want ('{' or '"').
func optionalMember(obj []byte, key string, want byte) error {
	v := member(obj, key)
	if v == nil || v[0] == 'n' || v[0] == want {
		return nil
	}
	return fmt.Errorf("field %q must be %s or null, got %s", key, kindName(want), kindName(v[0]))
}

// orNil returns b, or nil when b is empty, so that "no bytes" has one
// representation whichever way a value was made.
func orNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// checkBody validates a payload's JSON body and returns it, or a BodyError.
func checkBody(b []byte) (json.RawMessage, error) {
	if err := checkJSON(b); err != nil {
		return nil, BodyError{Err: err}
	}
	return b, nil
}
