// lookup.go reads single members out of a raw object without decoding the
// rest, for the few places a relay must look inside a payload (a tool's
// name, a progress token) and must not disturb the bytes around it.

package jsonrpc

import (
	"encoding/json"
	"errors"
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
