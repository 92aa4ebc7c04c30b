// frame.go is the framed form's unit: one binary WebSocket message is one
// frame, a 9-byte header (type, scope, channel) and a payload. The codec
// is byte-exact both ways and knows nothing of what payloads mean.

package wire

import (
	"encoding/binary"
	"strconv"
)

// HeaderSize is the length of a frame's header; a shorter message is not a
// frame.
const HeaderSize = 9

// FrameType is a frame's first byte.
type FrameType uint8

// The seven frame types. The names carry a Type prefix so that Request and
// Response stay free for the payloads they carry.
const (
	TypeAuthorization         FrameType = 0 // either side; never used on the proxy connection
	TypeRequest               FrameType = 1 // client: opens a scope (channel field ignored)
	TypeResponse              FrameType = 2 // server: one piece of a scope's answer
	TypeResponseFinish        FrameType = 3 // server: ends the scope
	TypeChannelRequest        FrameType = 4 // either: opens a channel inside an open scope
	TypeChannelResponse       FrameType = 5 // either: one piece of the answer to a channel the other side opened
	TypeChannelResponseFinish FrameType = 6 // either: ends a channel the other side opened
)

var typeNames = [...]string{
	"authorization", "request", "response", "response-finish",
	"channel-request", "channel-response", "channel-response-finish",
}

func (t FrameType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "type-" + strconv.Itoa(int(t))
}

// SentByClient reports whether the client (the side that dials) may send
// frames of this type.
func (t FrameType) SentByClient() bool {
	switch t {
	case TypeAuthorization, TypeRequest, TypeChannelRequest, TypeChannelResponse, TypeChannelResponseFinish:
		return true
	}
	return false
}

// SentByServer reports whether the server (the side dialled) may send
// frames of this type.
func (t FrameType) SentByServer() bool {
	switch t {
	case TypeAuthorization, TypeResponse, TypeResponseFinish,
		TypeChannelRequest, TypeChannelResponse, TypeChannelResponseFinish:
		return true
	}
	return false
}

// Frame is one message of the framed form. Channel means nothing for the
// scope-level types (request, response, response finish) and is written as
// whatever it holds.
type Frame struct {
	Type    FrameType
	Scope   uint32
	Channel uint32
	Payload []byte
}

// AppendFrame appends f's header and payload to b.
func AppendFrame(b []byte, f Frame) []byte {
	b = append(b, byte(f.Type))
	b = binary.BigEndian.AppendUint32(b, f.Scope)
	b = binary.BigEndian.AppendUint32(b, f.Channel)
	return append(b, f.Payload...)
}

// ParseFrame reads one message as a frame. The payload aliases msg (nil
// when empty): a caller that reuses msg must copy the payload first. It
// checks only the header; whether the type may travel in a direction is
// the receiver's question (SentByClient, SentByServer).
func ParseFrame(msg []byte) (Frame, error) {
	if len(msg) < HeaderSize {
		return Frame{}, ErrShortFrame
	}
	t := FrameType(msg[0])
	if t > TypeChannelResponseFinish {
		return Frame{}, UnknownTypeError{Type: msg[0]}
	}
	f := Frame{
		Type:    t,
		Scope:   binary.BigEndian.Uint32(msg[1:5]),
		Channel: binary.BigEndian.Uint32(msg[5:9]),
	}
	if len(msg) > HeaderSize {
		f.Payload = msg[HeaderSize:]
	}
	return f, nil
}
