// splice.go rewrites one string member of a raw object in place of
// re-encoding it: every other byte (unknown fields, _meta, key order,
// whitespace, big numbers) stays as the peer sent it.

package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNoStringMember is returned by WithStringMember when the member is
// absent or not a string.
var ErrNoStringMember = errors.New("member is missing or not a string")

// ErrNoMember is returned by ValueSpan when the member is absent.
var ErrNoMember = errors.New("member is missing")

// ValueSpan is the byte span [start, end) of member key's value in obj.
func ValueSpan(obj []byte, key string) (start, end int, err error) {
	raw, err := Lookup(obj, key)
	if err != nil {
		return 0, 0, err
	}
	if len(raw) == 0 {
		return 0, 0, fmt.Errorf("%q: %w", key, ErrNoMember)
	}
	start = Offset(obj, raw)
	return start, start + len(raw), nil
}

// Offset is where value, which Lookup returned from obj, starts in obj.
// It falls out of the capacities: Lookup returns a subslice of obj, and
// obj[i:j] has cap(obj)-i, so no second scan is needed.
func Offset(obj, value []byte) int { return cap(obj) - cap(value) }

// Splice returns a copy of obj with obj[start:end] replaced by v.
func Splice(obj []byte, start, end int, v []byte) []byte {
	out := make([]byte, 0, len(obj)-(end-start)+len(v))
	out = append(out, obj[:start]...)
	out = append(out, v...)
	return append(out, obj[end:]...)
}

// WithStringMember returns a copy of obj whose member key has the string
// value v; every other byte is unchanged.
func WithStringMember(obj []byte, key, v string) ([]byte, error) {
	start, end, err := ValueSpan(obj, key)
	switch {
	case errors.Is(err, ErrNoMember):
		return nil, fmt.Errorf("%q: %w", key, ErrNoStringMember)
	case err != nil:
		return nil, err
	case obj[start] != '"':
		return nil, fmt.Errorf("%q: %w", key, ErrNoStringMember)
	}
	out := make([]byte, 0, len(obj)-(end-start)+len(v)+2) // one allocation: it is on the relayed call's path
	out = append(out, obj[:start]...)
	out = AppendString(out, v)
	return append(out, obj[end:]...), nil
}

// WithMember returns a copy of obj whose member key, which must be there,
// has the raw value v; every other byte is unchanged.
func WithMember(obj []byte, key string, v json.RawMessage) (json.RawMessage, error) {
	start, end, err := ValueSpan(obj, key)
	if err != nil {
		return nil, err
	}
	return Splice(obj, start, end, v), nil
}

// SetMember returns obj with member key set to the raw value v: replaced
// where it is, added first where it is not; every other byte is kept.
// Empty or null obj is taken as {}; anything else that is not an object
// is -32602.
func SetMember(obj []byte, key string, v json.RawMessage) (json.RawMessage, error) {
	if start, end, err := ValueSpan(obj, key); err == nil {
		return Splice(obj, start, end, v), nil
	}
	if t := bytes.TrimSpace(obj); len(t) == 0 || string(t) == "null" {
		obj = []byte("{}")
	}
	if obj[0] != '{' {
		return nil, NewError(CodeInvalidParams, "invalid params: params must be an object", nil)
	}
	out := make([]byte, 0, len(obj)+len(key)+len(v)+4)
	out = append(out, '{')
	out = AppendString(out, key)
	out = append(out, ':')
	out = append(out, v...)
	rest := bytes.TrimSpace(obj[1:])
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...), nil
}

// WithoutMember returns a copy of obj without its members named key
// (every one, should the key repeat), compared as decoded keys; every
// other member keeps its bytes and its place. It returns obj itself when
// no member is named key, and ErrNotObject for anything but an object.
func WithoutMember(obj []byte, key string) ([]byte, error) {
	type span struct{ start, end int }
	var kept []span
	removed := false
	err := walkMembers(obj, func(rawKey []byte, escaped bool, value json.RawMessage) (bool, error) {
		k := string(rawKey[1 : len(rawKey)-1])
		if escaped && json.Unmarshal(rawKey, &k) != nil {
			return false, errSyntax
		}
		if k == key {
			removed = true
		} else {
			kept = append(kept, span{Offset(obj, rawKey), Offset(obj, value) + len(value)})
		}
		return true, nil
	})
	if err != nil || !removed {
		return obj, err
	}
	open := bytes.IndexByte(obj, '{')
	closing := bytes.LastIndexByte(obj, '}')
	out := make([]byte, 0, len(obj))
	out = append(out, obj[:open+1]...)
	for i, s := range kept {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, obj[s.start:s.end]...)
	}
	return append(out, obj[closing:]...), nil
}

// RewriteArray returns the raw array arr with each item replaced by what
// fn returns, or left out where fn says not to keep it; every kept item
// keeps its bytes unless fn changed them. Anything but an array is
// returned as it is, with ok false.
func RewriteArray(arr []byte, fn func(item json.RawMessage) (json.RawMessage, bool)) (out []byte, ok bool) {
	var items []json.RawMessage
	if i := skipSpace(arr, 0); i >= len(arr) || arr[i] != '[' || json.Unmarshal(arr, &items) != nil {
		return arr, false
	}
	out = append(make([]byte, 0, len(arr)), '[')
	for _, it := range items {
		v, keep := fn(json.RawMessage(bytes.TrimSpace(it)))
		if !keep {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	return append(out, ']'), true
}
