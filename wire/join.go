// join.go makes each WebSocket frame a client writes one write to its
// connection. The library masks a client's payload through a buffer of
// 4 KiB and writes each 4 KiB on its own. The gateway is the wire's
// client, so a Postgres pair's 256 KiB response took 64 system calls.
//
// JoinFrames puts a frameJoiner between the library and the connection,
// at the WebSocket's own bytes (the 101 response's body). It follows the
// frame headers and holds a frame's bytes until the frame is complete,
// then writes them at once. It never holds bytes past a frame's end, and
// the library writes a frame in one go, so nothing waits on it.

package wire

import (
	"encoding/binary"
	"io"
	"math"
	"net/http"

	"github.com/coder/websocket"
)

// maxJoin bounds what a frameJoiner holds: a longer frame is written in
// pieces of about this size.
const maxJoin = 1 << 20

// JoinFrames returns a copy of o (nil: the defaults) for websocket.Dial,
// whose HTTP client hands the library a connection that writes each
// frame at once. Every dial of the wire's client side goes through it.
func JoinFrames(o *websocket.DialOptions) *websocket.DialOptions {
	var d websocket.DialOptions
	if o != nil {
		d = *o
	}
	hc := http.Client{}
	if d.HTTPClient != nil {
		hc = *d.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = joinTransport{base: base}
	d.HTTPClient = &hc
	return &d
}

// joinTransport wraps the body of a 101 Switching Protocols response, the
// upgraded connection, in a joinedBody.
type joinTransport struct{ base http.RoundTripper }

func (t joinTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		return resp, err
	}
	if rwc, ok := resp.Body.(io.ReadWriteCloser); ok {
		resp.Body = &joinedBody{ReadWriteCloser: rwc, frameJoiner: frameJoiner{w: rwc}}
	}
	return resp, nil
}

// CloseIdleConnections passes the call on, as http.Client expects of a
// transport that has idle connections.
func (t joinTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// joinedBody reads and closes the upgraded connection as it is, and
// writes it through a frameJoiner.
type joinedBody struct {
	io.ReadWriteCloser
	frameJoiner
}

func (b *joinedBody) Write(p []byte) (int, error) { return b.frameJoiner.Write(p) }

// frameJoiner gathers a stream of WebSocket frames (RFC 6455 section 5.2)
// and writes to w whenever what it holds ends at a frame's end, or has
// reached maxJoin.
type frameJoiner struct {
	w    io.Writer
	buf  []byte
	head [14]byte // the current frame's header bytes seen so far
	nh   int
	left uint64 // the current frame's payload bytes still to come
}

func (f *frameJoiner) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	for q := p; len(q) > 0; {
		if f.left > 0 {
			k := uint64(len(q))
			if k > f.left {
				k = f.left
			}
			f.left -= k
			q = q[k:]
			continue
		}
		f.head[f.nh] = q[0]
		f.nh++
		q = q[1:]
		if n := headerLen(f.head[:f.nh]); n == f.nh {
			f.left = payloadLen(f.head[:n])
			f.nh = 0
		}
	}
	if (f.nh > 0 || f.left > 0) && len(f.buf) < maxJoin {
		return len(p), nil
	}
	_, err := f.w.Write(f.buf)
	if cap(f.buf) > maxJoin {
		f.buf = nil
	} else {
		f.buf = f.buf[:0]
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// headerLen is the length of the frame header h begins, or 0 while h is
// too short to say.
func headerLen(h []byte) int {
	if len(h) < 2 {
		return 0
	}
	n := 2
	switch h[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if h[1]&0x80 != 0 { // masked: the key follows the length
		n += 4
	}
	return n
}

// payloadLen is the payload length a complete frame header states.
func payloadLen(h []byte) uint64 {
	switch l := h[1] & 0x7f; l {
	case 126:
		return uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		return min(binary.BigEndian.Uint64(h[2:10]), math.MaxInt64)
	default:
		return uint64(l)
	}
}
