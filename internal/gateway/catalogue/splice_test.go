package catalogue

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

func TestWithStringMember(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"compact", `{"name":"a","x":1}`, `{"name":"p__a","x":1}`},
		{"pretty, member not first", "{\n  \"x\": [1, 2],\n  \"name\" :  \"a\" ,\n  \"y\":{}\n}", "{\n  \"x\": [1, 2],\n  \"name\" :  \"p__a\" ,\n  \"y\":{}\n}"},
		{"escaped key and value", `{"n\u0061me":"\u0061","big":123456789012345678901234567890}`, `{"n\u0061me":"p__a","big":123456789012345678901234567890}`},
		{"nested name untouched", `{"arguments":{"name":"keep"},"name":"a"}`, `{"arguments":{"name":"keep"},"name":"p__a"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := jsonrpc.WithStringMember([]byte(c.in), "name", "p__a")
			if err != nil || string(got) != c.want {
				t.Errorf("got %s, %v; want %s", got, err, c.want)
			}
		})
	}
	if got, _ := jsonrpc.WithStringMember([]byte(`{"name":"a"}`), "name", `q"\`); string(got) != `{"name":"q\"\\"}` {
		t.Errorf("escaped value: got %s", got)
	}
	for _, in := range []string{`{"x":1}`, `{"name":1}`, `[1]`, `{"name":null}`} {
		if _, err := jsonrpc.WithStringMember([]byte(in), "name", "p"); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

// Whatever the object, the splice changes the member's value to exactly the
// new string and leaves every other member equal.
func FuzzWithStringMember(f *testing.F) {
	f.Add([]byte(`{"name":"a","x":{"name":"b"}}`), "p\"\\é")
	f.Add([]byte("{ \"a\" : 1 , \"name\" : \"\\u00e9\" }"), "")
	f.Fuzz(func(t *testing.T, obj []byte, v string) {
		if !json.Valid(obj) {
			return
		}
		out, err := jsonrpc.WithStringMember(obj, "name", v)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %q from %q", out, obj)
		}
		if got, ok := jsonrpc.LookupString(out, "name"); !ok || got != jsonValid(v) {
			t.Fatalf("name %q, want %q", got, v)
		}
		var before, after map[string]any
		if json.Unmarshal(obj, &before) != nil || json.Unmarshal(out, &after) != nil {
			return
		}
		delete(before, "name")
		delete(after, "name")
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("other members changed: %v → %v", before, after)
		}
	})
}

// jsonValid is v as it reads back from JSON (invalid UTF-8 becomes U+FFFD).
func jsonValid(v string) string {
	b, _ := json.Marshal(v)
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}
