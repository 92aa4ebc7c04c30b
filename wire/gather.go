// gather.go lets the server role put many frames on the socket in one
// write. Every frame used to be its own write system call: at 64 exchanges
// at once, the proxy made three per exchange (the MCP answer, its finish,
// and the upstream's request) and the frames' syscalls were the largest
// part of its wire work. Now a frame written while other exchanges wait
// for the write turn — and will never give up waiting (their context
// cannot end) — is held in a buffer, and the last of them in line writes
// everything held at once. A frame nobody waits behind goes out at once,
// as before, so one exchange alone is not delayed.
//
// The WebSocket library flushes every message to its net.Conn; Accept
// hands it a gatherConn in place of the hijacked connection so that the
// flush can be held.

package wire

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// gatherLimit is the most bytes held back: a bigger batch is written at
// once, and a big message is never copied into the buffer.
const gatherLimit = 64 << 10

// gatherConn is a net.Conn whose writes are held in a buffer while a
// batch is being gathered.
type gatherConn struct {
	net.Conn

	mu   sync.Mutex // orders every write to the socket
	held bool       // a batch is being gathered: writes go to buf
	done bool       // the connection is ending: nothing is held any more
	buf  []byte
}

func (g *gatherConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held && !g.done && len(g.buf)+len(p) <= gatherLimit {
		g.buf = append(g.buf, p...)
		return len(p), nil
	}
	if len(g.buf) == 0 {
		return g.Conn.Write(p)
	}
	before := int64(len(g.buf))
	bufs := net.Buffers{g.buf, p}
	n, err := bufs.WriteTo(g.Conn)
	g.buf = g.buf[:0]
	return int(max(n-before, 0)), err
}

// hold starts (or goes on) gathering.
func (g *gatherConn) hold() {
	g.mu.Lock()
	g.held = true
	g.mu.Unlock()
}

// flush writes what was gathered and stops gathering.
func (g *gatherConn) flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = false
	if len(g.buf) == 0 {
		return nil
	}
	_, err := g.Conn.Write(g.buf)
	if cap(g.buf) > keepBuffer {
		g.buf = nil
	} else {
		g.buf = g.buf[:0]
	}
	return err
}

// stop flushes and never holds again: the connection is ending, and what
// is written from now on (a close frame) must not wait for a batch.
func (g *gatherConn) stop() {
	g.mu.Lock()
	g.done = true
	g.mu.Unlock()
	_ = g.flush()
}

// Accepted is a WebSocket accepted by Accept, to be served by
// ServeAccepted.
type Accepted struct {
	ws  *websocket.Conn
	out *gatherConn
}

// Conn returns the WebSocket.
func (a *Accepted) Conn() *websocket.Conn { return a.ws }

// Accept upgrades r to a WebSocket for the server role, as
// websocket.Accept does, except that frames of exchanges waiting for the
// write turn can be gathered into one write to the socket (see
// ServeAccepted). On error a response has been written to w.
func Accept(w http.ResponseWriter, r *http.Request, opts *websocket.AcceptOptions) (*Accepted, error) {
	gw := &gatheringWriter{ResponseWriter: w}
	ws, err := websocket.Accept(gw, r, opts)
	if err != nil {
		return nil, err
	}
	return &Accepted{ws: ws, out: gw.out}, nil
}

// ServeAccepted is Serve over a WebSocket from Accept: the same
// connection, with the frames of exchanges that wait for the write turn
// behind others gathered into one write.
func ServeAccepted(ctx context.Context, a *Accepted, h Handler, opts *Options) error {
	return serve(ctx, a.ws, a.out, h, opts)
}

// gatheringWriter hands the library a gatherConn when it hijacks.
type gatheringWriter struct {
	http.ResponseWriter
	out *gatherConn
}

func (w *gatheringWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *gatheringWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	w.out = &gatherConn{Conn: conn}
	brw.Writer.Reset(w.out)
	return w.out, brw, nil
}
