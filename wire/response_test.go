// response_test.go pins the MCP response frame: [0] and the result, [1]
// and the error object, both byte for byte — custom codes, data, unknown
// fields and integers beyond a float64 included.

package wire_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/wire"
)

func TestResponseRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		resp  wire.Response
		bytes string
	}{
		{"a result", wire.Response{Result: json.RawMessage(`{"content":[]}`)}, "\x00{\"content\":[]}"},
		{"an error of our making", wire.ErrorResponse(-32603, "upstream unreachable"),
			"\x01{\"code\":-32603,\"message\":\"upstream unreachable\"}"},
		{"an error with data", wire.Response{Error: jsonrpc.NewError(-32602, "bad", map[string]int{"at": 3})},
			"\x01{\"code\":-32602,\"message\":\"bad\",\"data\":{\"at\":3}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.resp.Append(nil); string(got) != tc.bytes {
				t.Fatalf("Append = %q, want %q", got, tc.bytes)
			}
			got, err := wire.DecodeResponse([]byte(tc.bytes))
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Result) != string(tc.resp.Result) || (got.Error == nil) != (tc.resp.Error == nil) {
				t.Fatalf("Decode = %+v", got)
			}
			if e := got.Error; e != nil && (e.Code != tc.resp.Error.Code || e.Message != tc.resp.Error.Message ||
				string(e.Data) != string(tc.resp.Error.Data)) {
				t.Fatalf("error = %+v, want %+v", e, tc.resp.Error)
			}
		})
	}
}

// TestResponseFidelity is the spec's fidelity list: whatever the MCP
// server said comes out as it went in.
func TestResponseFidelity(t *testing.T) {
	for _, p := range []string{
		"\x00{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"isError\":true,\"structuredContent\":{\"n\":18446744073709551616123},\"_meta\":{\"x\":1},\"unknown\":{\"deep\":[1e400]}}",
		"\x00 {\"tools\":[], \"nextCursor\":\"\\u00e9\"}\n",
		"\x01{\"code\":-32601,\"message\":\"no such tool\"}",
		"\x01{\"code\":-32602,\"message\":\"bad args\",\"data\":{\"field\":\"a\",\"n\":123456789012345678901}}",
		"\x01{\"code\":-32001,\"message\":\"custom\",\"data\":null}",
		"\x01{\"message\":\"order kept\",\"extra\":true,\"code\":-32099,\"data\":[1,2]}",
	} {
		r, err := wire.DecodeResponse([]byte(p))
		if err != nil {
			t.Fatalf("Decode(%q): %v", p, err)
		}
		if got := r.Append(nil); string(got) != p {
			t.Fatalf("changed:\n%q\n%q", p, got)
		}
		if r.Error != nil {
			if string(r.Error.Raw()) != p[1:] {
				t.Fatalf("error raw %q", r.Error.Raw())
			}
			// What the gateway writes to its own caller is the same bytes.
			env := jsonrpc.AppendError(nil, jsonrpc.ID("1"), r.Error)
			if want := `{"jsonrpc":"2.0","id":1,"error":` + p[1:] + `}`; string(env) != want {
				t.Fatalf("relayed %s, want %s", env, want)
			}
		}
	}
}

func TestResponseDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		want          func(error) bool
	}{
		{"empty", "", func(err error) bool { return errors.Is(err, wire.ErrEmpty) }},
		{"unknown tag", "\x02{}", func(err error) bool { return errors.Is(err, wire.UnknownTagError{Tag: 2}) }},
		{"result absent", "\x00", isBodyError},
		{"result not JSON", "\x00{\"a\":", isBodyError},
		{"result with trailing bytes", "\x00{} {}", isBodyError},
		{"error not an object", "\x01[]", isBodyError},
		{"error without code", "\x01{\"message\":\"m\"}", isBodyError},
		{"error code a fraction", "\x01{\"code\":1.5,\"message\":\"m\"}", isBodyError},
		{"error code a string", "\x01{\"code\":\"1\",\"message\":\"m\"}", isBodyError},
		{"error without message", "\x01{\"code\":1}", isBodyError},
		{"error message a number", "\x01{\"code\":1,\"message\":2}", isBodyError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := wire.DecodeResponse([]byte(tc.payload)); !tc.want(err) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func isBodyError(err error) bool {
	var be wire.BodyError
	return errors.As(err, &be)
}

func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		"\x00{\"content\":[],\"n\":1e400}", "\x00null", "\x01{\"code\":-32602,\"message\":\"x\",\"data\":{}}",
		"\x01{\"code\":1}", "\x02", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		checkCodec(t, p, wire.DecodeResponse, always[wire.Response])
	})
}
