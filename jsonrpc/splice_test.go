package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// SetMember replaces a member where it is and adds it first where it is
// not, keeping every other byte; params that are not an object are -32602.
func TestSetMemberReplacesInPlaceOrAddsFirst(t *testing.T) {
	for _, tc := range []struct{ name, obj, key, v, want string }{
		{"replaced where it is", `{"a":1, "k" : [1,2] ,"z":18446744073709551617}`, "k", `"x"`, `{"a":1, "k" : "x" ,"z":18446744073709551617}`},
		{"added first", `{"a":1}`, "k", `{}`, `{"k":{},"a":1}`},
		{"added to an empty object", `{ }`, "k", `true`, `{"k":true}`},
		{"empty params", ``, "k", `1`, `{"k":1}`},
		{"null params", ` null `, "k", `1`, `{"k":1}`},
		{"an escaped key is the same key", `{"\u006b":0}`, "k", `2`, `{"\u006b":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonrpc.SetMember([]byte(tc.obj), tc.key, json.RawMessage(tc.v))
			if err != nil || string(got) != tc.want {
				t.Fatalf("SetMember(%s, %q, %s) = %s, %v; want %s", tc.obj, tc.key, tc.v, got, err, tc.want)
			}
		})
	}
	for _, obj := range []string{`[1]`, `"s"`, `3`} {
		_, err := jsonrpc.SetMember([]byte(obj), "k", json.RawMessage(`1`))
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("SetMember(%s) = %v, want -32602", obj, err)
		}
	}
}

// FuzzSetMember: on any object, the result parses, holds v under key,
// and holds every other member as it was.
func FuzzSetMember(f *testing.F) {
	f.Add(`{"a":1,"k":2}`, "k", `[true]`)
	f.Add(`{}`, "k", `"v"`)
	f.Add(`{"a":{"k":1}}`, "k", `null`)
	f.Fuzz(func(t *testing.T, obj, key, v string) {
		var before map[string]json.RawMessage
		if json.Unmarshal([]byte(obj), &before) != nil || before == nil || !json.Valid([]byte(v)) || !utf8.ValidString(key) {
			t.Skip() // the keys set are ours, always valid UTF-8
		}
		got, err := jsonrpc.SetMember([]byte(obj), key, json.RawMessage(v))
		if err != nil {
			t.Skip() // a key the lookup refuses (duplicates, unreadable)
		}
		var after map[string]json.RawMessage
		if err := json.Unmarshal(got, &after); err != nil {
			t.Fatalf("SetMember(%s, %q, %s) = %s: %v", obj, key, v, got, err)
		}
		lv, err := jsonrpc.Lookup(got, key)
		if err != nil || string(lv) != strings.TrimSpace(v) {
			t.Fatalf("SetMember(%s, %q, %s) = %s: Lookup gives %s, %v", obj, key, v, got, lv, err)
		}
		for k := range before {
			if k != key && len(after[k]) == 0 {
				t.Fatalf("SetMember(%s, %q, %s) = %s lost %q", obj, key, v, got, k)
			}
		}
	})
}

func TestWithMemberReplacesOnlyTheValueAndNeedsTheMember(t *testing.T) {
	obj := []byte(`{ "a" : [1, 2] , "_meta":{"x":1},"big":12345678901234567890 }`)
	got, err := jsonrpc.WithMember(obj, "a", json.RawMessage(`"b"`))
	if want := `{ "a" : "b" , "_meta":{"x":1},"big":12345678901234567890 }`; err != nil || string(got) != want {
		t.Errorf("WithMember = %s, %v; want %s", got, err, want)
	}
	if _, err := jsonrpc.WithMember(obj, "absent", json.RawMessage(`1`)); !errors.Is(err, jsonrpc.ErrNoMember) {
		t.Errorf("WithMember of an absent member: %v, want ErrNoMember", err)
	}
	if _, err := jsonrpc.WithStringMember(obj, "a", "x"); !errors.Is(err, jsonrpc.ErrNoStringMember) {
		t.Errorf("WithStringMember of an array member: %v, want ErrNoStringMember", err)
	}
}

// WithoutMember removes every member of the key and keeps the others'
// bytes and order.
func TestWithoutMemberRemovesTheKeyAndKeepsTheRest(t *testing.T) {
	for _, tc := range []struct{ name, obj, key, want string }{
		{"first", `{"k":1,"a":[1, 2],"z":18446744073709551617}`, "k", `{"a":[1, 2],"z":18446744073709551617}`},
		{"middle", `{"a":1, "k" : {"x":1} , "z":"\u00e9"}`, "k", `{"a":1,"z":"\u00e9"}`},
		{"last", ` {"a":1,"k":2} `, "k", ` {"a":1} `},
		{"the only one", `{"k":2}`, "k", `{}`},
		{"every repeat", `{"k":1,"a":2,"k":3}`, "k", `{"a":2}`},
		{"an escaped key is the same key", `{"\u006b":0,"a":1}`, "k", `{"a":1}`},
		{"absent: obj itself", `{"a":1 , "b":2}`, "k", `{"a":1 , "b":2}`},
		{"nested keys stay", `{"a":{"k":1}}`, "k", `{"a":{"k":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonrpc.WithoutMember([]byte(tc.obj), tc.key)
			if err != nil || string(got) != tc.want {
				t.Fatalf("WithoutMember(%s, %q) = %s, %v; want %s", tc.obj, tc.key, got, err, tc.want)
			}
		})
	}
	if _, err := jsonrpc.WithoutMember([]byte(`[1]`), "k"); !errors.Is(err, jsonrpc.ErrNotObject) {
		t.Errorf("WithoutMember of an array: %v, want ErrNotObject", err)
	}
}

// FuzzWithoutMember: on any object, the result parses, lacks key, and
// holds every other member as it was.
func FuzzWithoutMember(f *testing.F) {
	f.Add(`{"a":1,"k":2}`, "k")
	f.Add(`{"k":{"k":1}}`, "k")
	f.Add(`{}`, "k")
	f.Fuzz(func(t *testing.T, obj, key string) {
		var before map[string]json.RawMessage
		if json.Unmarshal([]byte(obj), &before) != nil || before == nil {
			t.Skip()
		}
		got, err := jsonrpc.WithoutMember([]byte(obj), key)
		if err != nil {
			t.Fatalf("WithoutMember(%s, %q): %v", obj, key, err)
		}
		var after map[string]json.RawMessage
		if err := json.Unmarshal(got, &after); err != nil {
			t.Fatalf("WithoutMember(%s, %q) = %s: %v", obj, key, got, err)
		}
		if _, ok := after[key]; ok {
			t.Fatalf("WithoutMember(%s, %q) = %s still has it", obj, key, got)
		}
		delete(before, key)
		if len(after) != len(before) {
			t.Fatalf("WithoutMember(%s, %q) = %s: %d members, want %d", obj, key, got, len(after), len(before))
		}
		for k, v := range before {
			if string(after[k]) != string(v) {
				t.Fatalf("WithoutMember(%s, %q) = %s: member %q is %s, was %s", obj, key, got, k, after[k], v)
			}
		}
	})
}

// RewriteArray maps and filters an array's items, keeping the others'
// bytes; anything but an array comes back as it was.
func TestRewriteArrayMapsAndFiltersItems(t *testing.T) {
	dropTwo := func(it json.RawMessage) (json.RawMessage, bool) {
		if string(it) == "2" {
			return nil, false
		}
		if string(it) == `"x"` {
			return json.RawMessage(`"y"`), true
		}
		return it, true
	}
	for _, tc := range []struct{ in, want string }{
		{`[1, 2 ,"x", {"a" : 18446744073709551617}]`, `[1,"y",{"a" : 18446744073709551617}]`},
		{`[2]`, `[]`},
		{` [] `, `[]`},
	} {
		if got, ok := jsonrpc.RewriteArray([]byte(tc.in), dropTwo); !ok || string(got) != tc.want {
			t.Errorf("RewriteArray(%s) = %s, %v; want %s", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{`{"a":1}`, `"s"`, ``, `[1,`} {
		if got, ok := jsonrpc.RewriteArray([]byte(in), dropTwo); ok || string(got) != in {
			t.Errorf("RewriteArray(%s) = %s, %v; want it back, not ok", in, got, ok)
		}
	}
}

// FuzzRewriteArray: keeping every item gives an array equal to the input.
func FuzzRewriteArray(f *testing.F) {
	f.Add(`[1, "a", {"b":[2]}]`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		out, ok := jsonrpc.RewriteArray([]byte(in), func(it json.RawMessage) (json.RawMessage, bool) { return it, true })
		if !ok {
			return
		}
		var a, b []json.RawMessage
		if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal(out, &b) != nil || len(a) != len(b) {
			t.Fatalf("RewriteArray(%s) = %s", in, out)
		}
		for i := range a {
			if strings.TrimSpace(string(a[i])) != string(b[i]) {
				t.Fatalf("RewriteArray(%s) = %s: item %d changed", in, out, i)
			}
		}
	})
}
