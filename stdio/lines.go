// lines.go reads newline-delimited messages with a bound on their size.
// bufio.Scanner stops for good at its first oversized token; an MCP stream
// must instead drop that one line, answer it, and go on reading.

package stdio

import (
	"bufio"
	"io"
)

// lineReader splits a stream into lines. A line ends at "\n"; a "\r" before
// it is dropped too, and a last line without a terminator still counts.
// Lines holding only JSON whitespace are skipped: they carry no message.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte // a line that spans more than one bufio chunk
	// head and tail are the ends of the last line refused as too long,
	// so that the call it answered can be found (Truncated).
	head, tail []byte
}

// The ends of a refused line that are kept.
const (
	keepHead = 4 << 10
	keepTail = 512
)

// Truncated returns the first and last bytes of the line Next last
// refused with ErrLineTooLong.
func (lr *lineReader) Truncated() (head, tail []byte) { return lr.head, lr.tail }

// keepHead starts recording a refused line: its head from the chunks
// read so far; keepTail then rolls its tail over every chunk.
func (lr *lineReader) keepHead(parts ...[]byte) {
	lr.head = lr.head[:0]
	for _, p := range parts {
		lr.head = append(lr.head, p[:min(len(p), keepHead-len(lr.head))]...)
	}
	lr.tail = lr.tail[:0]
}

func (lr *lineReader) keepTail(chunk []byte) {
	if len(chunk) >= keepTail {
		lr.tail = append(lr.tail[:0], chunk[len(chunk)-keepTail:]...)
		return
	}
	lr.tail = append(lr.tail, chunk...)
	if len(lr.tail) > keepTail {
		lr.tail = append(lr.tail[:0], lr.tail[len(lr.tail)-keepTail:]...)
	}
}

// retainLimit is the largest accumulation buffer kept between lines; one
// huge message should not pin its memory for the rest of the session.
const retainLimit = 1 << 20

func newLineReader(r io.Reader, max int) *lineReader {
	return newLineReaderSize(r, max, 64<<10)
}

func newLineReaderSize(r io.Reader, max, bufSize int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, bufSize), max: max}
}

// Next returns the next non-blank line without its terminator. The slice is
// only valid until the next call. A line longer than the limit is consumed
// and reported as ErrLineTooLong; reading can go on. After the last line
// Next returns io.EOF.
func (lr *lineReader) Next() ([]byte, error) {
	for {
		line, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !isBlank(line) {
			return line, nil
		}
	}
}

// next returns one line, blank or not.
func (lr *lineReader) next() ([]byte, error) {
	if cap(lr.buf) > retainLimit {
		lr.buf = nil
	}
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if err == nil && len(lr.buf) == 0 && !tooLong {
			// The common case: the whole line sits in bufio's buffer.
			return lr.finish(chunk)
		}
		// Room for the terminator ("\r\n") on top of the limit, which
		// counts only the line's content.
		if !tooLong && len(lr.buf)+len(chunk) > lr.max+2 {
			lr.keepHead(lr.buf, chunk)
			tooLong, lr.buf = true, lr.buf[:0]
		}
		if tooLong {
			lr.keepTail(chunk)
		} else {
			lr.buf = append(lr.buf, chunk...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(lr.buf) > 0 || tooLong):
			// A last line without "\n"; EOF comes on the next call.
		case err != nil:
			return nil, err
		}
		if tooLong {
			return nil, ErrLineTooLong
		}
		return lr.finish(lr.buf)
	}
}

// finish strips the terminator and applies the limit to what is left.
func (lr *lineReader) finish(line []byte) ([]byte, error) {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > lr.max {
		lr.keepHead(line)
		lr.keepTail(line)
		return nil, ErrLineTooLong
	}
	return line, nil
}

// isBlank reports whether b holds only JSON whitespace.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
