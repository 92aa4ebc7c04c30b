// frame_test.go pins the frame codec: the 9-byte header, byte-exact both
// ways, the two ways a message is not a frame, and who may send what.

package wire_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

func TestFrameRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame wire.Frame
		bytes []byte
	}{
		{"request opens a scope, channel ignored",
			wire.Frame{Type: wire.TypeRequest, Scope: 1, Payload: []byte{1, '{', '}'}},
			[]byte{1, 0, 0, 0, 1, 0, 0, 0, 0, 1, '{', '}'}},
		{"numbers are big-endian",
			wire.Frame{Type: wire.TypeChannelRequest, Scope: 0x01020304, Channel: 0xA0B0C0D0, Payload: []byte{7}},
			[]byte{4, 1, 2, 3, 4, 0xA0, 0xB0, 0xC0, 0xD0, 7}},
		{"a finish has no payload",
			wire.Frame{Type: wire.TypeResponseFinish, Scope: 0xFFFFFFFF},
			[]byte{3, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}},
		{"channel response finish",
			wire.Frame{Type: wire.TypeChannelResponseFinish, Scope: 2, Channel: 3},
			[]byte{6, 0, 0, 0, 2, 0, 0, 0, 3}},
		{"authorization",
			wire.Frame{Type: wire.TypeAuthorization, Payload: []byte("token")},
			append([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0}, "token"...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wire.AppendFrame(nil, tc.frame); !bytes.Equal(got, tc.bytes) {
				t.Fatalf("AppendFrame = %v, want %v", got, tc.bytes)
			}
			f, err := wire.ParseFrame(tc.bytes)
			if err != nil {
				t.Fatalf("ParseFrame: %v", err)
			}
			if f.Type != tc.frame.Type || f.Scope != tc.frame.Scope || f.Channel != tc.frame.Channel ||
				!bytes.Equal(f.Payload, tc.frame.Payload) {
				t.Fatalf("ParseFrame = %+v, want %+v", f, tc.frame)
			}
		})
	}
}

func TestParseFrameAliasesThePayload(t *testing.T) {
	msg := []byte{2, 0, 0, 0, 1, 0, 0, 0, 0, 'a'}
	f, _ := wire.ParseFrame(msg)
	msg[9] = 'b'
	if string(f.Payload) != "b" {
		t.Fatalf("payload %q does not alias the message", f.Payload)
	}
}

func TestParseFrameErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  []byte
		want error
	}{
		{"empty message", nil, wire.ErrShortFrame},
		{"eight bytes", make([]byte, 8), wire.ErrShortFrame},
		{"type 7 is none of the seven", []byte{7, 0, 0, 0, 0, 0, 0, 0, 0}, wire.UnknownTypeError{Type: 7}},
		{"type 255", []byte{255, 0, 0, 0, 0, 0, 0, 0, 0, 1}, wire.UnknownTypeError{Type: 255}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wire.ParseFrame(tc.msg)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestFrameDirections is the spec's table of who sends each type.
func TestFrameDirections(t *testing.T) {
	for _, tc := range []struct {
		t              wire.FrameType
		client, server bool
	}{
		{wire.TypeAuthorization, true, true},
		{wire.TypeRequest, true, false},
		{wire.TypeResponse, false, true},
		{wire.TypeResponseFinish, false, true},
		{wire.TypeChannelRequest, true, true},
		{wire.TypeChannelResponse, true, true},
		{wire.TypeChannelResponseFinish, true, true},
		{wire.FrameType(7), false, false},
	} {
		if tc.t.SentByClient() != tc.client || tc.t.SentByServer() != tc.server {
			t.Errorf("%v: SentByClient=%v SentByServer=%v, want %v %v",
				tc.t, tc.t.SentByClient(), tc.t.SentByServer(), tc.client, tc.server)
		}
	}
}

// FuzzParseFrame: parsing never panics, and a parsed frame writes back to
// exactly the message it came from.
func FuzzParseFrame(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 1, 0, 0, 0, 0, 1, '{', '}'})
	f.Add([]byte{6, 0, 0, 0, 2, 0, 0, 0, 3})
	f.Add([]byte{9, 0})
	f.Fuzz(func(t *testing.T, msg []byte) {
		fr, err := wire.ParseFrame(msg)
		if err != nil {
			var ute wire.UnknownTypeError
			if !errors.Is(err, wire.ErrShortFrame) && !errors.As(err, &ute) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if got := wire.AppendFrame(nil, fr); !bytes.Equal(got, msg) {
			t.Fatalf("round trip %v -> %v", msg, got)
		}
	})
}
