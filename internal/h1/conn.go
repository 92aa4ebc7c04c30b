// conn.go is one connection: it writes a request and reads the answer's
// status line and headers, on the caller's goroutine.

package h1

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// bufferedBody is the largest body copied behind the headers into one
// write; a larger one follows them in a write of its own.
const bufferedBody = 32 << 10

// conn is one connection, used by one request at a time.
type conn struct {
	t         *Transport
	h         *host
	nc        net.Conn
	rc        syscall.RawConn // nc's descriptor, to peek at while idle
	br        *bufio.Reader
	wbuf      []byte      // the request's head, and a small body behind it
	iov       [4][]byte   // a large Post's head and body
	bufs      net.Buffers // iov, as writev consumes it
	hdr       []byte      // the answer's header lines, joined by '\n'
	one       [1]byte
	open      bool // what the last peek found
	abort     func()
	peekFn    func(fd uintptr) bool
	idleSince time.Time
}

func newConn(t *Transport, h *host, nc net.Conn) *conn {
	c := &conn{t: t, h: h, nc: nc, br: bufio.NewReaderSize(nc, 4096)}
	if sc, ok := nc.(syscall.Conn); ok {
		c.rc, _ = sc.SyscallConn()
	}
	// Made once, so that a request's cancellation and a peek allocate
	// nothing of their own.
	c.abort = func() { c.nc.SetDeadline(time.Unix(1, 0)) }
	c.peekFn = c.peek
	return c
}

// reusable reports whether an idle c may carry another request: not idle
// too long, nothing unread, and not closed by the server meanwhile.
func (c *conn) reusable(now time.Time) bool {
	if d := c.t.Fallback.IdleConnTimeout; d > 0 && now.Sub(c.idleSince) > d {
		return false
	}
	if c.br.Buffered() > 0 {
		return false
	}
	if c.rc == nil {
		return true
	}
	c.open = false
	if c.rc.Read(c.peekFn) != nil {
		return false
	}
	return c.open
}

// outgoing is a request to write: an *http.Request's parts, or those of
// a POST given to Transport.Post without one.
type outgoing struct {
	req    *http.Request // nil for Post
	method string
	url    *url.URL
	host   string
	header http.Header
	body   io.Reader // nil when there is none
	length int64
	posted bool // a Post's: its body is inline
	inline Body
}

// outgoingOf is req's parts.
func outgoingOf(req *http.Request) outgoing {
	o := outgoing{req: req, method: req.Method, url: req.URL, host: req.Host, header: req.Header, length: req.ContentLength}
	if req.Body != nil && req.Body != http.NoBody {
		o.body = req.Body
	}
	return o
}

// closeBody closes the request's body, as RoundTrip must whatever happens.
func (o *outgoing) closeBody() {
	if o.req != nil {
		closeBody(o.req)
	}
}

// roundTrip sends o on c and reads the answer's head. On an error c is
// closed; otherwise the answer's body gives c back when it is done.
func (c *conn) roundTrip(ctx context.Context, o *outgoing) (*http.Response, error) {
	stop := noStop
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			o.closeBody()
			c.t.put(c)
			return nil, err
		}
		stop = context.AfterFunc(ctx, c.abort)
	}
	sent, err := c.write(o)
	o.closeBody()
	var resp *http.Response
	switch {
	case err == nil:
		resp, err = c.read(ctx, o, stop, true)
	case sent && ctx.Err() == nil:
		// A server may answer before it has read the whole request (413)
		// and close: that answer is the one to return.
		if early, rerr := c.read(ctx, o, stop, false); rerr == nil {
			return early, nil
		}
	}
	if err != nil {
		stop()
		c.nc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return resp, nil
}

func noStop() bool { return true }

// write sends o's head and body; sent reports whether it began to, so
// that an error after that may have an answer waiting.
func (c *conn) write(o *outgoing) (sent bool, err error) {
	host := o.host
	if host == "" {
		host = o.url.Host
	}
	if !httpguts.ValidHostHeader(host) {
		return false, fmt.Errorf("h1: invalid Host header %q", host)
	}
	method := o.method
	if method == "" {
		method = http.MethodGet
	}
	b := append(c.wbuf[:0], method...)
	b = append(b, ' ')
	switch u := o.url; {
	case u.Opaque != "":
		b = append(b, u.RequestURI()...)
	default:
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		b = append(b, p...)
		if u.ForceQuery || u.RawQuery != "" {
			b = append(b, '?')
			b = append(b, u.RawQuery...)
		}
	}
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	if _, ok := o.header["User-Agent"]; !ok {
		b = append(b, "User-Agent: Go-http-client/1.1\r\n"...)
	}
	for k, vs := range o.header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		if !httpguts.ValidHeaderFieldName(k) {
			return false, fmt.Errorf("h1: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return false, fmt.Errorf("h1: invalid header field value for %q", k)
			}
			if k == "User-Agent" && v == "" {
				continue
			}
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, strings.Trim(v, " \t")...)
			b = append(b, "\r\n"...)
		}
	}
	n := o.length
	hasBody := o.body != nil || o.posted
	switch {
	case o.posted:
		n = int64(o.inline.Len())
	case !hasBody:
		n = 0
	}
	if hasBody || method == http.MethodPost {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, n, 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	head := len(b)
	switch {
	case o.posted && n <= bufferedBody:
		b = append(append(append(b, o.inline[0]...), o.inline[1]...), o.inline[2]...)
		n = 0
	case o.body != nil && n <= bufferedBody:
		b = append(b, make([]byte, n)...)
		if _, err := io.ReadFull(o.body, b[head:]); err != nil {
			return false, errBodyLength
		}
		n = 0
	}
	if cap(b) <= 2*bufferedBody {
		c.wbuf = b
	}
	if n > 0 && o.posted {
		// The head and the body in one writev, the body not copied.
		c.iov = [4][]byte{b, o.inline[0], o.inline[1], o.inline[2]}
		c.bufs = c.iov[:]
		_, err := c.bufs.WriteTo(c.nc)
		c.iov = [4][]byte{}
		return true, err
	}
	if _, err := c.nc.Write(b); err != nil {
		return true, err
	}
	switch {
	case n > 0:
		if w, err := io.Copy(c.nc, o.body); err != nil {
			return true, err
		} else if w != n {
			return false, errBodyLength
		}
	case o.body != nil:
		if m, _ := o.body.Read(c.one[:]); m > 0 {
			return false, errBodyLength
		}
	}
	return true, nil
}

// read reads the answer's head, past any 1xx answer, and makes the
// response whose body gives c back (and calls stop) when it is done; a
// connection that may not be reused is closed then.
func (c *conn) read(ctx context.Context, o *outgoing, stop func() bool, reuse bool) (*http.Response, error) {
	limit := c.t.Fallback.MaxResponseHeaderBytes
	if limit <= 0 {
		limit = 10 << 20
	}
	for informational := 0; ; informational++ {
		resp, err := readHead(c.br, &c.hdr, limit)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("%w: 101 Switching Protocols to a request that asked for no upgrade", errMalformed)
		}
		if resp.StatusCode >= 200 {
			resp.Request = o.req
			return resp, c.attach(ctx, o.method, resp, stop, reuse)
		}
		if informational == 10 {
			return nil, fmt.Errorf("%w: too many 1xx answers", errMalformed)
		}
	}
}

// attach gives resp its body, reading from c.
func (c *conn) attach(ctx context.Context, method string, resp *http.Response, stop func() bool, reuse bool) error {
	f, err := framing(method, resp)
	if err != nil {
		return err
	}
	if !reuse {
		f.keep, resp.Close = false, true
	}
	b := &body{c: c, ctx: ctx, stop: stop, mode: f.mode, n: f.length, keep: f.keep}
	if f.mode == modeLength && f.length == 0 {
		resp.Body = http.NoBody
		b.finish(f.keep)
		return nil
	}
	resp.Body = b
	return nil
}
