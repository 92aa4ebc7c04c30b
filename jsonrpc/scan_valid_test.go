package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

// skipValid must end every valid value exactly where the validating
// skipValue does: it is what the walks after validation use.
func TestSkipValidEndsWhereSkipValueDoes(t *testing.T) {
	long := strings.Repeat("abcdefgh", 5)
	for _, tc := range []struct {
		rule, in string
	}{
		{"empty string", `""`},
		{"escaped quote", `"a\"b"`},
		{"a backslash escaped before the closing quote", `"a\\"`},
		{"three backslashes and a quote are an escaped quote", `"a\\\"b"`},
		{"four backslashes then the closing quote", `"a\\\\"`},
		{"a string of escaped quotes", `"\"\"\"\""`},
		{"unicode escape of a quote", `"\u0022x"`},
		{"long plain string", `"` + long + long + `"`},
		{"brackets inside strings do not count", `{"a":"}]{[","b":["]"]}`},
		{"nested containers", `[{"a":[1,2,{"b":null}]},[],{}]`},
		{"number", `-12.5e+3`},
		{"number then a comma", `7,`},
		{"literals", `true`},
		{"object with spaces", "{ \"a\" : [ 1 , \"x\" ] }"},
		{"non-ASCII", `"é\"ü"`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			b := []byte(tc.in)
			want, err := skipValue(b, 0, 0)
			if err != nil {
				t.Fatalf("the reference refuses %q: %v", tc.in, err)
			}
			if got := skipValid(b, 0); got != want {
				t.Errorf("skipValid(%q) = %d, skipValue says %d", tc.in, got, want)
			}
		})
	}
}

// FuzzSkipValid holds skipValid to skipValue on every valid value it is
// given, and checks that on any other input it still ends within b.
func FuzzSkipValid(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"a \"quoted\" \\ path"}],"isError":false}`))
	f.Add([]byte(`"\\\\\"\\"`))
	f.Add([]byte(`[1,[2,[3]],"]"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		got := skipValid(data, 0)
		if got < 0 || got > len(data) {
			t.Fatalf("skipValid(%q) = %d, outside 0..%d", data, got, len(data))
		}
		if !json.Valid(data) {
			return
		}
		want, err := skipValue(data, 0, 0)
		if err != nil {
			return // leading space: skipValue starts at a value
		}
		if got != want {
			t.Fatalf("skipValid(%q) = %d, skipValue says %d", data, got, want)
		}
	})
}
