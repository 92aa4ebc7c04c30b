// lookup.go reads single members out of a raw object without decoding the
// rest, for the few places a relay must look inside a payload (a tool's
// name, a progress token) and must not disturb the bytes around it.

package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// ErrNotObject is returned by Lookup for input that is not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

// Lookup returns the raw value of member key in the JSON object obj, or nil
// if the object has no such member. The result aliases obj. obj must be
// valid JSON (as every parsed envelope member is); Lookup checks only what
// it walks.
func Lookup(obj []byte, key string) (json.RawMessage, error) {
	var found json.RawMessage
	err := walkMembers(obj, func(rawKey []byte, escaped bool, v json.RawMessage) (bool, error) {
		match := false
		if escaped {
			var s string
			match = json.Unmarshal(rawKey, &s) == nil && s == key
		} else {
			match = string(rawKey[1:len(rawKey)-1]) == key
		}
		if match {
			found = v // last one wins, as in encoding/json
		}
		return true, nil
	})
	return found, err
}

// LookupString returns member key of obj decoded as a string; ok is false
// when the member is absent or not a string.
func LookupString(obj []byte, key string) (s string, ok bool) {
	raw, err := Lookup(obj, key)
	if err != nil || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	if _, escaped, _ := skipString(raw, 0); !escaped {
		return string(raw[1 : len(raw)-1]), true
	}
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// LookupText is LookupString without making a string: the member's
// characters, aliasing obj when the string has no escape (a copy, decoded,
// when it has one). A lookup by name keeps the allocation of a string for
// the name it does not find.
func LookupText(obj []byte, key string) (text []byte, ok bool) {
	raw, err := Lookup(obj, key)
	if err != nil || len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	if _, escaped, _ := skipString(raw, 0); !escaped {
		return raw[1 : len(raw)-1], true
	}
	s, ok := LookupString(obj, key)
	return []byte(s), ok
}

// LookupIs reports whether member key of obj is the string want, without
// making a string of it: what a check of a result's resultType or a
// request's level needs on every call.
func LookupIs(obj []byte, key, want string) bool {
	raw, err := Lookup(obj, key)
	if err != nil || len(raw) < 2 || raw[0] != '"' {
		return false
	}
	if _, escaped, _ := skipString(raw, 0); !escaped {
		return string(raw[1:len(raw)-1]) == want
	}
	s, ok := LookupString(obj, key)
	return ok && s == want
}

// MayHold reports whether the raw JSON b may hold s in a key or a string,
// once decoded: s's bytes are in b, or an escape that could spell one of
// its characters is. It is the fast pass before a walk that decodes, for
// a check that an escaped key must not slip past (such as
// "io.modelcontextprotocol\/clientInfo"). A character an escape cannot
// stand for is written as itself, so b without s and without such an
// escape holds no s.
func MayHold(b []byte, s string) bool {
	switch {
	case bytes.Contains(b, []byte(s)), bytes.Contains(b, []byte(`\u`)):
		return true
	case strings.ContainsAny(s, "\"\\\b\f\n\r\t") || strings.ContainsRune(s, utf8.RuneError):
		// A two-character escape (or, for U+FFFD, a byte that is no
		// UTF-8) may spell it.
		return bytes.IndexByte(b, '\\') >= 0 || !utf8.Valid(b)
	case strings.IndexByte(s, '/') >= 0:
		return bytes.Contains(b, []byte(`\/`))
	}
	return false
}
