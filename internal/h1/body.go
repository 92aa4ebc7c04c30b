// body.go reads an answer's body: of a stated length, chunked, or to the
// connection's end. Read returns what has arrived without waiting for
// more, so an event stream's events come as they are sent. A body read to
// its end gives its connection back; one closed before that closes it.

package h1

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// How an answer's body is framed.
const (
	modeLength  = iota // Content-Length bytes
	modeChunked        // chunked transfer coding
	modeClose          // to the connection's end
)

// The states of a chunked body between reads.
const (
	chunkHead = iota // a chunk's size line is next
	chunkData        // n bytes of the chunk are left
	chunkEnd         // the CRLF after a chunk's data is next
)

// chunkedTE is resp.TransferEncoding of a chunked answer.
var chunkedTE = []string{"chunked"}

// frame is how an answer's body is framed, and whether the connection
// carries another request after it.
type frame struct {
	mode   int
	length int64
	keep   bool
}

// framing reads how resp's body is framed from its status and header, as
// RFC 9112 section 6.3 orders it, and sets resp's ContentLength,
// TransferEncoding and Close.
func framing(method string, resp *http.Response) (frame, error) {
	h := resp.Header
	keep := resp.ProtoMinor == 1 && !hasToken(h["Connection"], "close")
	resp.Close = !keep
	if code := resp.StatusCode; method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified {
		resp.ContentLength = 0
		return frame{mode: modeLength, keep: keep}, nil
	}
	if resp.ProtoMinor == 0 {
		delete(h, "Transfer-Encoding") // HTTP/1.0 has none, as net/http reads it
	}
	if te, ok := h["Transfer-Encoding"]; ok {
		if len(te) != 1 || !strings.EqualFold(te[0], "chunked") {
			return frame{}, fmt.Errorf("%w %q", errUnsupported, te)
		}
		delete(h, "Transfer-Encoding")
		delete(h, "Content-Length")
		resp.TransferEncoding, resp.ContentLength = chunkedTE, -1
		return frame{mode: modeChunked, keep: keep}, nil
	}
	if cl, ok := h["Content-Length"]; ok {
		n := parseLength(cl[0])
		for _, v := range cl[1:] {
			if v != cl[0] {
				n = -1
			}
		}
		if n < 0 {
			return frame{}, fmt.Errorf("%w: Content-Length %q", errMalformed, cl)
		}
		h["Content-Length"] = cl[:1] // the same length repeated is one
		resp.ContentLength = n
		return frame{mode: modeLength, length: n, keep: keep}, nil
	}
	resp.ContentLength, resp.Close = -1, true
	return frame{mode: modeClose}, nil
}

// parseLength is a Content-Length value, or -1 when it is not one.
func parseLength(v string) int64 {
	if v == "" || len(v) > 18 {
		return -1
	}
	var n int64
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return -1
		}
		n = n*10 + int64(v[i]-'0')
	}
	return n
}

// hasToken reports whether a comma-separated header names token.
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.Trim(part, " \t"), token) {
				return true
			}
		}
	}
	return false
}

// body is an answer's body on c.
type body struct {
	c     *conn
	ctx   context.Context
	stop  func() bool // ends the request context's hold on c
	mode  int
	n     int64 // left of the body (modeLength) or of the chunk
	state int
	keep  bool
	err   error // sticky, once Read has returned it

	closed atomic.Bool
	done   atomic.Bool // c given back or closed
}

func (b *body) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errClosedBody
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var err error
	switch b.mode {
	case modeLength:
		n, err = b.readLength(p)
	case modeChunked:
		n, err = b.readChunked(p)
	default:
		n, err = b.c.br.Read(p)
		if err == io.EOF {
			b.finish(false)
		}
	}
	if err != nil && err != io.EOF {
		b.finish(false)
		switch {
		case b.closed.Load():
			err = errClosedBody
		case b.ctx.Err() != nil:
			err = b.ctx.Err()
		}
	}
	b.err = err
	return n, err
}

// Close ends the body. A body not read to its end closes the connection,
// which also ends a Read waiting on it.
func (b *body) Close() error {
	if !b.closed.Swap(true) {
		b.finish(false)
	}
	return nil
}

// finish gives c back when keep is true and the request's context did not
// end meanwhile (its deadline may be set); otherwise it closes c. It runs
// once.
func (b *body) finish(keep bool) {
	if !b.done.CompareAndSwap(false, true) {
		return
	}
	if b.stop() && keep {
		b.c.t.put(b.c)
		return
	}
	b.c.nc.Close()
}

func (b *body) readLength(p []byte) (int, error) {
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.c.br.Read(p)
	b.n -= int64(n)
	if b.n == 0 {
		b.finish(b.keep)
		return n, io.EOF
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *body) readChunked(p []byte) (int, error) {
	br := b.c.br
	for {
		switch b.state {
		case chunkEnd:
			if err := b.chunkCRLF(); err != nil {
				return 0, err
			}
		case chunkHead:
			size, err := b.chunkSize()
			if err != nil {
				return 0, err
			}
			if size == 0 {
				if err := b.trailer(); err != nil {
					return 0, err
				}
				b.finish(b.keep)
				return 0, io.EOF
			}
			b.n, b.state = size, chunkData
		default:
			if int64(len(p)) > b.n {
				p = p[:b.n]
			}
			n, err := br.Read(p)
			b.n -= int64(n)
			if b.n == 0 {
				b.state = chunkEnd
				if b.lastChunkBuffered() {
					b.finish(b.keep)
					return n, io.EOF
				}
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
	}
}

// lastEnd is a chunk's CRLF, the last chunk and an empty trailer.
var lastEnd = []byte("\r\n0\r\n\r\n")

// lastChunkBuffered consumes the end of the body when it has arrived with
// the data before it. The Read returning that data then also returns
// io.EOF and gives the connection back: a caller who stops reading there
// does not cost it.
func (b *body) lastChunkBuffered() bool {
	br := b.c.br
	if br.Buffered() < len(lastEnd) {
		return false
	}
	if end, _ := br.Peek(len(lastEnd)); !bytes.Equal(end, lastEnd) {
		return false
	}
	br.Discard(len(lastEnd))
	return true
}

// chunkCRLF reads the CRLF that ends a chunk's data.
func (b *body) chunkCRLF() error {
	end, err := b.c.br.Peek(2)
	if err != nil {
		return unexpected(err)
	}
	if end[0] != '\r' || end[1] != '\n' {
		return errChunked
	}
	b.c.br.Discard(2)
	b.state = chunkHead
	return nil
}

// chunkSize reads a chunk's size line, dropping any extension.
func (b *body) chunkSize() (int64, error) {
	line, err := readLine(b.c.br)
	if err == errHeaderSize {
		return 0, errChunked
	}
	if err != nil {
		return 0, unexpected(err)
	}
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, " \t")
	if len(line) == 0 || len(line) > 15 {
		return 0, errChunked
	}
	var n int64
	for _, ch := range line {
		switch {
		case '0' <= ch && ch <= '9':
			ch -= '0'
		case 'a' <= ch && ch <= 'f':
			ch -= 'a' - 10
		case 'A' <= ch && ch <= 'F':
			ch -= 'A' - 10
		default:
			return 0, errChunked
		}
		n = n<<4 | int64(ch)
	}
	return n, nil
}

// maxTrailer bounds the trailer fields read after the last chunk.
const maxTrailer = 64

// trailer reads and drops the trailer fields after the last chunk.
func (b *body) trailer() error {
	for range maxTrailer {
		line, err := readLine(b.c.br)
		if err == errHeaderSize {
			return errChunked
		}
		if err != nil {
			return unexpected(err)
		}
		if len(line) == 0 {
			return nil
		}
	}
	return errChunked
}

// unexpected is err, where the end of the connection is one before the
// body's.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
