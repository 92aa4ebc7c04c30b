// members.go walks the members of a raw object in order, keys decoded as
// encoding/json decodes them, values left as slices of the input. Lookup
// reads one member with it; the engine's key check (mcp/paramkeys.go)
// reads them all, because a peer that decodes keys differently from us
// must not be handed an object whose meaning depends on the decoder.

package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// Members calls fn for each member of the JSON object obj, in order, with
// the member's key decoded (escapes resolved, invalid UTF-8 as U+FFFD, as
// encoding/json does) and its raw value, which aliases obj. It stops at
// the first false from fn. obj must be valid JSON (as every parsed
// envelope member is); Members checks only what it walks and returns
// ErrNotObject for anything but an object.
func Members(obj []byte, fn func(key string, value json.RawMessage) bool) error {
	return walkMembers(obj, func(rawKey []byte, escaped bool, value json.RawMessage) (bool, error) {
		var key string
		if !escaped {
			key = string(rawKey[1 : len(rawKey)-1])
		} else if json.Unmarshal(rawKey, &key) != nil {
			return false, errSyntax
		}
		return fn(key, value), nil
	})
}

// MemberKeys is Members with each key as bytes: a slice of obj when the
// key holds no escape (no copy is made, which Members must make to give a
// string), a decoded copy when it does. The key is valid as long as obj.
func MemberKeys(obj []byte, fn func(key []byte, value json.RawMessage) bool) error {
	return walkMembers(obj, func(rawKey []byte, escaped bool, value json.RawMessage) (bool, error) {
		if !escaped {
			return fn(rawKey[1:len(rawKey)-1], value), nil
		}
		var key string
		if json.Unmarshal(rawKey, &key) != nil {
			return false, errSyntax
		}
		return fn([]byte(key), value), nil
	})
}

// walkMembers calls fn with each member's key as it stands in obj (quotes
// included), whether its decoded value may differ from those bytes, and
// the raw value. Lookup compares unescaped keys without decoding them.
func walkMembers(obj []byte, fn func(rawKey []byte, escaped bool, value json.RawMessage) (bool, error)) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ErrNotObject
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] != '}' {
		if obj[i] != '"' {
			return errSyntax
		}
		keyStart := i
		keyEnd, escaped, err := skipString(obj, i)
		if err != nil {
			return err
		}
		i = skipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			return errSyntax
		}
		i = skipSpace(obj, i+1)
		if i >= len(obj) {
			return errSyntax
		}
		end := skipValid(obj, i) // obj is valid JSON: the caller's promise
		if more, err := fn(obj[keyStart:keyEnd], escaped, obj[i:end]); !more || err != nil {
			return err
		}
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return nil
}

// FoldTwins finds two keys of one object, in the JSON value v or any
// value within it, that encoding/json takes for the same struct field
// (equal FoldKey; one key twice too): the keys, decoded, and true. A gate
// that reads a call's arguments refuses such arguments, since what it read
// need not be what a backend reads. v must be valid JSON.
func FoldTwins(v []byte) (key, other string, ok bool) {
	i := skipSpace(v, 0)
	switch {
	case i >= len(v):
	case v[i] == '{':
		key, other, ok = objectFoldTwins(v[i:])
	case v[i] == '[':
		for i = skipSpace(v, i+1); i < len(v) && v[i] != ']' && !ok; {
			end := skipValid(v, i)
			key, other, ok = FoldTwins(v[i:end])
			if i = skipSpace(v, end); i < len(v) && v[i] == ',' {
				i = skipSpace(v, i+1)
			}
		}
	}
	return key, other, ok
}

// objectFoldTwins is FoldTwins of an object: its own keys, then its
// values in turn.
func objectFoldTwins(obj []byte) (key, other string, ok bool) {
	return ObjectTwins(obj, func(_ []byte, v json.RawMessage) (string, string, bool) {
		if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
			return FoldTwins(v)
		}
		return "", "", false
	})
}

// ObjectTwins finds two keys of the object obj that encoding/json takes
// for one (a KeySet), else the first twins within reports in a member's
// value: the keys, decoded, and true. FoldTwins searches every value;
// a caller that knows which members matter searches only those.
func ObjectTwins(obj []byte, within func(k []byte, v json.RawMessage) (string, string, bool)) (key, other string, ok bool) {
	var set KeySet
	_ = MemberKeys(obj, func(k []byte, v json.RawMessage) bool {
		if twin, found := set.Add(k); found {
			key, other, ok = string(twin), string(k), true
		} else {
			key, other, ok = within(k, v)
		}
		return !ok
	})
	return key, other, ok
}

// KeySet is a set of one object's keys, compared as encoding/json matches
// keys to struct fields (FoldKey), or byte for byte when Exact. Add says
// which key already in it a new one is taken for. The first few are
// compared where they lie, with nothing allocated; past them, in a map,
// so that an object of many keys costs linear time, not quadratic. The
// zero value is empty; the keys added must stay unchanged while it is
// used.
type KeySet struct {
	Exact bool
	few   [16][]byte
	n     int
	more  map[string][]byte // by form, past few
}

// Add adds k, unless a key in the set is taken for it: that key is
// returned then, and found is true.
func (s *KeySet) Add(k []byte) (twin []byte, found bool) {
	if s.more == nil && s.n < len(s.few) {
		for _, p := range s.few[:s.n] {
			if s.same(k, p) {
				return p, true
			}
		}
		s.few[s.n] = k
		s.n++
		return nil, false
	}
	if s.more == nil {
		s.more = make(map[string][]byte, 2*len(s.few))
		for _, p := range s.few[:s.n] {
			s.more[s.form(p)] = p
		}
	}
	f := s.form(k)
	if p, ok := s.more[f]; ok {
		return p, true
	}
	s.more[f] = k
	return nil, false
}

func (s *KeySet) same(a, b []byte) bool {
	if s.Exact {
		return bytes.Equal(a, b)
	}
	return EqualFold(a, b)
}

func (s *KeySet) form(k []byte) string {
	if s.Exact {
		return string(k)
	}
	return FoldKey(string(k))
}

// FoldKey returns the form of key under which encoding/json matches an
// object's member to a struct field: two keys with the same FoldKey are
// the same field to it. ASCII letters are upper-cased; any other rune
// becomes the smallest rune of its Unicode simple case-folding orbit, so
// that the Kelvin sign (U+212A) folds with "k" and the long s (U+017F)
// with "s".
func FoldKey(key string) string {
	simple := true
	for i := 0; i < len(key); i++ {
		if c := key[i]; c >= utf8.RuneSelf || ('a' <= c && c <= 'z') {
			simple = false
			break
		}
	}
	if simple {
		return key
	}
	out := make([]byte, 0, len(key))
	for _, r := range key {
		out = utf8.AppendRune(out, foldOne(r))
	}
	return string(out)
}

// EqualFold reports whether FoldKey(a) == FoldKey(b), without building
// either; a and b may each be a string or bytes.
func EqualFold[A, B ~string | ~[]byte](a A, b B) bool {
	// The ASCII prefix byte for byte: keys are mostly ASCII, and the
	// reserved ones share long prefixes ("io.modelcontextprotocol/").
	common := min(len(a), len(b))
	i := 0
	for ; i < common && a[i]|b[i] < utf8.RuneSelf; i++ {
		if ca, cb := a[i], b[i]; ca != cb && upperASCII(ca) != upperASCII(cb) {
			return false
		}
	}
	if i == common {
		// One ran out with all it had matched: every rune folds to a rune,
		// so whatever the other has left matches nothing.
		return len(a) == len(b)
	}
	j := i
	for i < len(a) && j < len(b) {
		ra, n := nextRune(a, i)
		i += n
		rb, m := nextRune(b, j)
		j += m
		if ra != rb && foldOne(ra) != foldOne(rb) {
			return false
		}
	}
	return i == len(a) && j == len(b)
}

// upperASCII is an ASCII byte as FoldKey writes it.
func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// nextRune decodes the rune at s[i:], as ranging over a string does.
func nextRune[S ~string | ~[]byte](s S, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(string(s[i:])) // not ASCII: rare in keys
}

// foldOne is one rune as FoldKey writes it.
func foldOne(r rune) rune {
	if r < utf8.RuneSelf {
		return rune(upperASCII(byte(r)))
	}
	return foldRune(r)
}

// foldRune returns the smallest rune of r's simple case-folding orbit.
func foldRune(r rune) rune {
	for {
		next := unicode.SimpleFold(r)
		if next <= r {
			return next
		}
		r = next
	}
}
