// scope_request_test.go pins the scope-opening requests: the tools begin
// with its arguments kept as they came, and the six tags this project does
// not serve, kept opaque.

package wire_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/wire"
)

func TestScopeRequestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   wire.ScopeRequest
		bytes string
	}{
		{"tools begin with arguments", wire.BeginTools{Arguments: json.RawMessage(`{"db":"x","n":1e400}`)},
			"\x01{\"arguments\":{\"db\":\"x\",\"n\":1e400}}"},
		{"tools begin with an image", wire.BeginTools{Arguments: json.RawMessage(`null`),
			Image: &wire.Image{Name: "ghcr.io/a/b:1", Digest: "sha256:00"}},
			"\x01{\"arguments\":null,\"image\":{\"name\":\"ghcr.io/a/b:1\",\"digest\":\"sha256:00\"}}"},
		{"tools begin with nothing", wire.BeginTools{}, "\x01{}"},
		{"agents begin, opaque", wire.OtherBegin{Tag: wire.TagAgentsBegin, Content: []byte("{..")}, "\x00{.."},
		{"filesystem serve, empty", wire.OtherBegin{Tag: wire.TagFilesystemServe}, "\x06"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.req.Append(nil); string(got) != tc.bytes {
				t.Fatalf("Append = %q, want %q", got, tc.bytes)
			}
			got, err := wire.DecodeScopeRequest([]byte(tc.bytes))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.req) {
				t.Fatalf("Decode = %#v, want %#v", got, tc.req)
			}
		})
	}
}

// TestBeginArgumentsGoThroughUntouched: the arguments are what the program
// is handed, so they keep their bytes; unknown members of the begin itself
// are not carried.
func TestBeginArgumentsGoThroughUntouched(t *testing.T) {
	p := "\x01{ \"future\":1, \"arguments\" : {\"z\":1,\"a\":[123456789012345678901234567890]} ,\"image\":null}"
	r, err := wire.DecodeScopeRequest([]byte(p))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.(wire.BeginTools).Arguments); got != `{"z":1,"a":[123456789012345678901234567890]}` {
		t.Fatalf("arguments %s", got)
	}
}

func TestScopeRequestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
		want          func(error) bool
	}{
		{"empty", "", func(err error) bool { return errors.Is(err, wire.ErrEmpty) }},
		{"unknown tag", "\x07", func(err error) bool { return errors.Is(err, wire.UnknownTagError{Tag: 7}) }},
		{"tools begin not JSON", "\x01{", isBodyError},
		{"tools begin without content", "\x01", isBodyError},
		{"tools begin an array", "\x01[]", isBodyError},
		{"image a string", "\x01{\"image\":\"x\"}", isBodyError},
		{"image without digest", "\x01{\"image\":{\"name\":\"x\"}}", isBodyError},
		{"image name a number", "\x01{\"image\":{\"name\":1,\"digest\":\"d\"}}", isBodyError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := wire.DecodeScopeRequest([]byte(tc.payload)); !tc.want(err) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func FuzzScopeRequest(f *testing.F) {
	for _, s := range []string{
		"\x01{\"arguments\":{\"a\":1}}", "\x01{\"arguments\":1,\"image\":{\"name\":\"n\\u00e9\",\"digest\":\"d\"}}",
		"\x00abc", "\x06", "\x07", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		checkCodec(t, p, wire.DecodeScopeRequest, func(r wire.ScopeRequest) bool {
			b, ok := r.(wire.BeginTools)
			if !ok {
				return true
			}
			// Rebuilt from its parts, but the arguments keep their bytes.
			want, _ := jsonrpc.Lookup(p[1:], "arguments")
			if string(b.Arguments) != string(want) {
				t.Fatalf("arguments %q, want %q", b.Arguments, want)
			}
			return false
		})
	})
}
