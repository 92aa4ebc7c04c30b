// proxy_channel_test.go pins the channel requests the proxy opens: their
// bytes, their typed decode errors, and that a server request goes through
// untouched.

package wire_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

func TestProxyChannelRequestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   wire.ProxyChannelRequest
		bytes string
	}{
		{"postgres carries the proxy's four-byte id", wire.ProxyPostgres{ConnID: 0x01020304}, "\x00\x01\x02\x03\x04"},
		{"daemon carries the proxy's four-byte id", wire.ProxyDaemon{ConnID: 9}, "\x01\x00\x00\x00\x09"},
		{"a server request names its related client channel", wire.McpServerRequest{Related: 5,
			Request: json.RawMessage(`{"jsonrpc":"2.0","id":"p1","method":"elicitation/create","params":{"message":"m","n":1e400}}`)},
			"\x0c\x00\x00\x00\x05" + `{"jsonrpc":"2.0","id":"p1","method":"elicitation/create","params":{"message":"m","n":1e400}}`},
		{"a server request related to no channel", wire.McpServerRequest{Request: json.RawMessage(`{"jsonrpc":"2.0","id":7,"method":"roots/list"}`)},
			"\x0c\x00\x00\x00\x00" + `{"jsonrpc":"2.0","id":7,"method":"roots/list"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.req.Append(nil); string(got) != tc.bytes {
				t.Fatalf("Append = %q, want %q", got, tc.bytes)
			}
			got, err := wire.DecodeProxyChannelRequest([]byte(tc.bytes))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.req) {
				t.Fatalf("Decode = %#v, want %#v", got, tc.req)
			}
		})
	}
}

func TestProxyChannelRequestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		is            func(error) bool
	}{
		{"empty", "", func(err error) bool { return errors.Is(err, wire.ErrEmpty) }},
		{"a tag of the client's family", "\x08{}", func(err error) bool { var e wire.UnknownTagError; return errors.As(err, &e) && e.Tag == 8 }},
		{"a postgres id of three bytes", "\x00\x00\x00\x01", func(err error) bool { var e wire.ConnectionIDError; return errors.As(err, &e) && e.Len == 3 }},
		{"a daemon id of five bytes", "\x01\x00\x00\x00\x00\x01", func(err error) bool { var e wire.ConnectionIDError; return errors.As(err, &e) && e.Len == 5 }},
		{"a server request without its related channel", "\x0c\x00\x00", func(err error) bool { var e wire.ConnectionIDError; return errors.As(err, &e) }},
		{"a server request that is not JSON", "\x0c\x00\x00\x00\x00{", func(err error) bool { var e wire.ServerRequestError; return errors.As(err, &e) }},
		{"a server request that is a notification", "\x0c\x00\x00\x00\x00" + `{"jsonrpc":"2.0","method":"notifications/message"}`,
			func(err error) bool { var e wire.ServerRequestError; return errors.As(err, &e) }},
		{"a server request that is an answer", "\x0c\x00\x00\x00\x00" + `{"jsonrpc":"2.0","id":1,"result":{}}`,
			func(err error) bool { var e wire.ServerRequestError; return errors.As(err, &e) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wire.DecodeProxyChannelRequest([]byte(tc.payload))
			if err == nil || !tc.is(err) {
				t.Fatalf("Decode(%q) error = %v", tc.payload, err)
			}
		})
	}
}

func FuzzProxyChannelRequest(f *testing.F) {
	for _, s := range []string{
		"", "\x00\x00\x00\x00\x01", "\x01\x00\x00\x00\x02", "\x0c\x00\x00\x00\x03" + `{"jsonrpc":"2.0","id":1,"method":"m"}`,
		"\x0c\x00\x00\x00\x00" + `{"jsonrpc":"2.0","id":"x","method":"sampling/createMessage","params":{"a":[1,2]}}`, "\x0c",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		checkCodec(t, p, wire.DecodeProxyChannelRequest, always[wire.ProxyChannelRequest])
	})
}
