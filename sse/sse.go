// Package sse is the text/event-stream codec MCP's HTTP transports ride on.
// A Writer emits events, with ids so that a client can resume. A Reader
// parses them as the WHATWG specification says, tolerant of CRLF, comments
// and fields split over many lines.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// Event is one server-sent event.
type Event struct {
	ID    string // "" for none
	Name  string // the event field; "" means "message"
	Data  []byte
	Retry int // milliseconds; 0 for none
}

// AppendEvent appends ev in wire form. Data is split on line breaks into
// several data fields so that any payload round-trips. A reader ends a line
// at LF, CRLF or a lone CR, so all three are split on. A lone CR written
// through would cut the data short, and let the rest of the line pose as a
// field (an injected id or event). CRs therefore come back as LF, which for
// JSON is the same whitespace.
func AppendEvent(b []byte, ev Event) []byte {
	if ev.ID != "" {
		b = append(b, "id: "...)
		b = append(b, ev.ID...)
		b = append(b, '\n')
	}
	if ev.Name != "" {
		b = append(b, "event: "...)
		b = append(b, ev.Name...)
		b = append(b, '\n')
	}
	if ev.Retry > 0 {
		b = append(b, "retry: "...)
		b = strconv.AppendInt(b, int64(ev.Retry), 10)
		b = append(b, '\n')
	}
	data := ev.Data
	for {
		i, n := lineBreak(data)
		b = append(b, "data: "...)
		if i < 0 {
			b = append(b, data...)
			b = append(b, '\n')
			break
		}
		b = append(b, data[:i]...)
		b = append(b, '\n')
		data = data[i+n:]
	}
	return append(b, '\n')
}

// lineBreak returns the index and length of the first line break in data
// (LF, CRLF or a lone CR), or -1. It looks for a CR only up to the next
// LF, so splitting a payload stays linear.
func lineBreak(data []byte) (int, int) {
	lf := bytes.IndexByte(data, '\n')
	line := data
	if lf >= 0 {
		line = data[:lf]
	}
	if cr := bytes.IndexByte(line, '\r'); cr >= 0 {
		if cr+1 < len(data) && data[cr+1] == '\n' {
			return cr, 2
		}
		return cr, 1
	}
	if lf >= 0 {
		return lf, 1
	}
	return -1, 0
}

// ErrTooLarge is returned by Reader.Next for an event over the size limit.
var ErrTooLarge = errors.New("sse: event too large")

// Reader parses events from a stream.
type Reader struct {
	r       *bufio.Reader
	max     int
	lastID  string
	retry   int // the last retry field seen, in milliseconds (0: none)
	data    []byte
	hasData bool

	buf         []byte // the current chunk up to LF
	pending     []byte // what of it is not yet returned
	havePending bool
}

// NewReader reads events of at most max bytes of data each (0: 16 MiB).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = 16 << 20
	}
	return &Reader{r: bufio.NewReaderSize(r, 16<<10), max: max}
}

// LastEventID is the id of the last event with one, as a client sends back
// in Last-Event-ID to resume.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry is the reconnection time the stream asked for in its latest retry
// field, in any event so far, with data or not (0 when it set none). A
// client reconnecting after the stream ends waits this long.
func (r *Reader) Retry() time.Duration { return time.Duration(r.retry) * time.Millisecond }

// Next returns the next event that carries data. Comments (keepalives)
// and events without data are skipped. Data is the reader's own copy.
func (r *Reader) Next() (Event, error) {
	var ev Event
	r.data = r.data[:0]
	r.hasData = false
	idSet := false
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.hasData {
				// A stream that ends without the blank line drops the event,
				// as browsers do.
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if len(line) == 0 { // dispatch
			if idSet {
				r.lastID = ev.ID
			}
			if !r.hasData {
				ev, idSet = Event{}, false
				continue
			}
			ev.Data = bytes.Clone(r.data)
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if r.hasData {
				r.data = append(r.data, '\n')
			}
			if len(r.data)+len(value) > r.max {
				return Event{}, ErrTooLarge
			}
			r.data = append(r.data, value...)
			r.hasData = true
		case "event":
			ev.Name = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID = string(value)
				idSet = true
			}
		case "retry":
			if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 {
				ev.Retry, r.retry = n, n
			}
		}
	}
}

// readLine returns one line without its terminator (LF, CRLF or a lone
// CR). A chunk up to the next LF is read once and split on lone CRs.
func (r *Reader) readLine() ([]byte, error) {
	if !r.havePending {
		r.buf = r.buf[:0]
		for {
			chunk, err := r.r.ReadSlice('\n')
			r.buf = append(r.buf, chunk...)
			if err == bufio.ErrBufferFull {
				if len(r.buf) > r.max+64 {
					return nil, ErrTooLarge
				}
				continue
			}
			if err != nil && (err != io.EOF || len(r.buf) == 0) {
				return nil, err
			}
			break
		}
		line := bytes.TrimSuffix(r.buf, []byte("\n"))
		r.pending = bytes.TrimSuffix(line, []byte("\r"))
		r.havePending = true
	}
	if i := bytes.IndexByte(r.pending, '\r'); i >= 0 {
		line := r.pending[:i]
		r.pending = r.pending[i+1:]
		return line, nil
	}
	line := r.pending
	r.pending, r.havePending = nil, false
	return line, nil
}
