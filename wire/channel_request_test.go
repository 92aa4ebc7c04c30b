// channel_request_test.go pins the nine channel requests: their bytes,
// their typed decode errors, and that MCP params go through untouched.

package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

func TestChannelRequestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   wire.ChannelRequest
		bytes string
	}{
		{"postgres carries a four-byte id", wire.Postgres{ConnID: 0x01020304}, "\x00\x01\x02\x03\x04"},
		{"info carries nothing", wire.Info{}, "\x01"},
		{"daemon carries a four-byte id", wire.Daemon{ConnID: 7}, "\x02\x00\x00\x00\x07"},
		{"list tools with null", wire.McpListTools{Params: json.RawMessage(`null`)}, "\x03null"},
		{"list tools with a cursor", wire.McpListTools{Params: json.RawMessage(`{"cursor":"c2"}`)}, "\x03{\"cursor\":\"c2\"}"},
		{"list resources", wire.McpListResources{Params: json.RawMessage(`{"_meta":{"k":1}}`)}, "\x04{\"_meta\":{\"k\":1}}"},
		{"call tool", wire.McpCallTool{Params: json.RawMessage(`{"name":"add","arguments":{"a":1}}`)},
			"\x05{\"name\":\"add\",\"arguments\":{\"a\":1}}"},
		{"read resource", wire.McpReadResource{Params: json.RawMessage(`{"uri":"file:///a"}`)},
			"\x06{\"uri\":\"file:///a\"}"},
		{"notifications carry nothing", wire.McpNotifications{}, "\x07"},
		{"secrets", wire.Secrets{Values: map[string]string{"A": "1"}, Raw: json.RawMessage(`{"A":"1"}`)},
			"\x08{\"A\":\"1\"}"},
		{"any other request", wire.McpRequest{Method: "prompts/get", Params: json.RawMessage(`{"name":"p","arguments":{"a":"1"}}`)},
			"\x09{\"method\":\"prompts/get\",\"params\":{\"name\":\"p\",\"arguments\":{\"a\":\"1\"}}}"},
		{"any other request without params", wire.McpRequest{Method: "resources/templates/list"},
			"\x09{\"method\":\"resources/templates/list\"}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.req.Append(nil); string(got) != tc.bytes {
				t.Fatalf("Append = %q, want %q", got, tc.bytes)
			}
			got, err := wire.DecodeChannelRequest([]byte(tc.bytes))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.req) {
				t.Fatalf("Decode = %#v, want %#v", got, tc.req)
			}
		})
	}
}

func TestListParamsNilEncodesAsNull(t *testing.T) {
	if got := (wire.McpListTools{}).Append(nil); string(got) != "\x03null" {
		t.Fatalf("Append = %q", got)
	}
}

// TestChannelRequestDecodeErrors: the spec's decode errors are exactly
// empty, unknown tag, connection id not four bytes, MCP params, secrets.
func TestChannelRequestDecodeErrors(t *testing.T) {
	var (
		tag wire.UnknownTagError
		id  wire.ConnectionIDError
		mcp wire.McpParamsError
		sec wire.SecretsError
		req wire.McpRequestError
	)
	for _, tc := range []struct {
		name    string
		payload string
		as      any // a pointer for errors.As; nil means the sentinel ErrEmpty
		check   func() bool
	}{
		{"empty payload", "", nil, nil},
		{"unknown tag", "\x0a", &tag, func() bool { return tag.Tag == 10 }},
		{"postgres id of three bytes", "\x00\x01\x02\x03", &id, func() bool { return id.Len == 3 }},
		{"postgres with no id", "\x00", &id, func() bool { return id.Len == 0 }},
		{"daemon id of five bytes", "\x02\x01\x02\x03\x04\x05", &id, func() bool { return id.Len == 5 }},
		{"list params not JSON", "\x03{", &mcp, nil},
		{"list params absent", "\x03", &mcp, nil},
		{"list params an array", "\x03[]", &mcp, nil},
		{"list cursor a number", "\x04{\"cursor\":1}", &mcp, nil},
		{"list _meta a string", "\x03{\"_meta\":\"x\"}", &mcp, nil},
		{"call tool without name", "\x05{\"arguments\":{}}", &mcp, nil},
		{"call tool name not a string", "\x05{\"name\":1}", &mcp, nil},
		{"call tool name in another case", "\x05{\"NAME\":\"x\"}", &mcp, nil},
		{"call tool arguments an array", "\x05{\"name\":\"x\",\"arguments\":[1]}", &mcp, nil},
		{"call tool params null", "\x05null", &mcp, nil},
		{"call tool trailing garbage", "\x05{\"name\":\"x\"} x", &mcp, nil},
		{"read resource without uri", "\x06{}", &mcp, nil},
		{"read resource _meta an array", "\x06{\"uri\":\"u\",\"_meta\":[]}", &mcp, nil},
		{"secrets not JSON", "\x08{\"A\":", &sec, nil},
		{"secrets absent", "\x08", &sec, nil},
		{"secrets a list", "\x08[\"x\"]", &sec, nil},
		{"secrets null", "\x08null", &sec, nil},
		{"a secret that is a number", "\x08{\"A\":1}", &sec, nil},
		{"a secret that is null", "\x08{\"A\":null}", &sec, nil},
		{"a request absent", "\x09", &req, nil},
		{"a request not JSON", "\x09{\"method\":", &req, nil},
		{"a request that is a list", "\x09[\"prompts/list\"]", &req, nil},
		{"a request without a method", "\x09{\"params\":{}}", &req, nil},
		{"a request whose method is a number", "\x09{\"method\":9}", &req, nil},
		{"a request whose method is empty", "\x09{\"method\":\"\"}", &req, nil},
		{"initialize is the proxy's own", "\x09{\"method\":\"initialize\",\"params\":{}}", &req, nil},
		{"a notification is not a request", "\x09{\"method\":\"notifications/cancelled\"}", &req, nil},
		{"a tools/call without its name", "\x09{\"method\":\"tools/call\",\"params\":{}}", &req, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := wire.DecodeChannelRequest([]byte(tc.payload))
			if err == nil || req != nil {
				t.Fatalf("Decode = %#v, %v; want an error", req, err)
			}
			if tc.as == nil {
				if !errors.Is(err, wire.ErrEmpty) {
					t.Fatalf("err = %v, want ErrEmpty", err)
				}
				return
			}
			if !errors.As(err, tc.as) {
				t.Fatalf("err = %T %v, want %T", err, err, tc.as)
			}
			if tc.check != nil && !tc.check() {
				t.Fatalf("err = %#v", err)
			}
		})
	}
}

// TestMcpParamsGoThroughUntouched: params are checked, never re-encoded —
// unknown fields, _meta, integers beyond a float64, escapes and spacing
// all survive.
func TestMcpParamsGoThroughUntouched(t *testing.T) {
	for _, p := range []string{
		"\x05{\"name\":\"big\",\"arguments\":{\"n\":123456789012345678901234567890,\"f\":1e400},\"_meta\":{\"progressToken\":\"t\"},\"extra\":[1,2]}",
		"\x05 {  \"na\\u006de\" : \"\\u00e9\\n\" }\n",
		"\x06{\"uri\":\"file:///x\",\"_meta\":null,\"z\":{}}",
		"\x03{\"cursor\":null,\"future\":true}",
		"\x04  null ",
		"\x09{\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"n\":123456789012345678901234567890}}",
	} {
		req, err := wire.DecodeChannelRequest([]byte(p))
		if err != nil {
			t.Fatalf("Decode(%q): %v", p, err)
		}
		if got := req.Append(nil); !bytes.Equal(got, []byte(p)) {
			t.Fatalf("params changed:\n%q\n%q", p, got)
		}
	}
}

func TestContentlessRequestsIgnoreTrailingBytes(t *testing.T) {
	for p, want := range map[string]wire.ChannelRequest{
		"\x01anything": wire.Info{},
		"\x07\x00\x01": wire.McpNotifications{},
	} {
		got, err := wire.DecodeChannelRequest([]byte(p))
		if err != nil || got != want {
			t.Fatalf("Decode(%q) = %#v, %v", p, got, err)
		}
	}
}

func FuzzChannelRequest(f *testing.F) {
	for _, s := range []string{
		"", "\x00\x00\x00\x00\x01", "\x01", "\x02\x00\x00\x00\x02", "\x03null", "\x04{\"cursor\":\"x\"}",
		"\x05{\"name\":\"a\",\"arguments\":{\"x\":1e999}}", "\x06{\"uri\":\"u\"}", "\x07tail",
		"\x08{\"A\":\"secret\",\"B\":\"\\u0041\"}", "\x08{\"A\":12}", "\x09", "\x0a",
		"\x09{\"method\":\"prompts/get\",\"params\":{\"name\":\"x\"}}", "\x09{ \"params\": null, \"method\": \"p\\u0073\" }",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		checkCodec(t, p, wire.DecodeChannelRequest, func(r wire.ChannelRequest) bool {
			switch r.(type) {
			case wire.Info, wire.McpNotifications:
				return len(p) == 1
			case wire.McpRequest:
				return false // the object is rebuilt; its params are kept
			}
			return true
		})
	})
}
