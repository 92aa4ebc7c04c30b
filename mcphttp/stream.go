// stream.go writes server-sent events to an HTTP response. One is the
// answer stream of one POST, which starts as plain JSON and turns into an
// event stream only if something must be sent before the answer. The other
// is the standalone stream a client opens with GET.

package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/sse"
)

// errStreamClosed is returned by Send on a stream that has ended.
var errStreamClosed = errors.New("mcphttp: stream closed")

// eventWriter writes events to one response, serialized.
type eventWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      http.ResponseController
	started bool
	closed  bool
	prefix  string // event ids are prefix + "-" + sequence
	post    uint64 // when prefix is "": the POST's number, the prefix being "p" + post
	seq     uint64
	buf     []byte
	onEvent func(id string, msg []byte) // records events for replay; may be nil
	// priming, when positive, makes the stream open with a priming event
	// carrying this retry, in milliseconds (SEP-1699: an id to resume from,
	// empty data). Such a stream is registered in streams when it starts (as
	// ps). Each of its messages is kept there for a resuming GET.
	priming int
	streams *postStreams
	keep    int // how many events ps keeps
	// status, when set, chooses the HTTP status of an answer sent as
	// plain JSON (a sessionless error's: sessionless.go).
	status func(answer jsonrpc.Parts) int
	keepB  int // how many bytes of events ps keeps
	ps     *postStream
	// open, when set, counts the stream while it is open: from its
	// start to release.
	open     *atomic.Int64
	released bool
	// sessionID is the Mcp-Session-Id header's value, if any, set last
	// before the first write (a shared slice: one allocation per session,
	// not per response).
	sessionID []string
}

func newEventWriter(w http.ResponseWriter, prefix string) *eventWriter {
	return &eventWriter{w: w, rc: *http.NewResponseController(w), prefix: prefix}
}

// chunkedPast is the size past which net/http's server sends an answer
// chunked unless it is told the length: its buffer before chunking. Below
// it, net/http says the length itself.
const chunkedPast = 2048

// Header values shared by every response.
var (
	contentTypeEventStream = []string{"text/event-stream"}
	cacheControlNoCache    = []string{"no-cache, no-transform"}
	accelBufferingNo       = []string{"no"}
)

// nextID is the id of the next event; the caller holds mu. A POST's
// prefix is made only once its stream starts: most answers are plain
// JSON and carry no event id.
func (e *eventWriter) nextID() string {
	if e.prefix == "" {
		e.prefix = "p" + strconv.FormatUint(e.post, 10)
	}
	e.seq++
	return e.prefix + "-" + strconv.FormatUint(e.seq, 10)
}

// setSessionID sets the session id header, if any, on h.
func (e *eventWriter) setSessionID(h http.Header) {
	if e.sessionID != nil {
		h[HeaderSessionID] = e.sessionID
	}
}

// start sends the event-stream headers; the caller holds mu.
func (e *eventWriter) start() {
	if e.started {
		return
	}
	e.started = true
	if e.open != nil {
		e.open.Add(1)
	}
	h := e.w.Header()
	h["Content-Type"] = contentTypeEventStream
	h["Cache-Control"] = cacheControlNoCache
	h["X-Accel-Buffering"] = accelBufferingNo
	e.setSessionID(h)
	_ = e.rc.SetWriteDeadline(noDeadline)
	e.w.WriteHeader(http.StatusOK)
	if e.priming > 0 {
		if e.streams != nil {
			e.ps = e.streams.open(e.post, e.keep, e.keepB)
		}
		_ = e.writeLocked(sse.Event{ID: e.nextID(), Retry: e.priming})
		return
	}
	_ = e.rc.Flush()
}

// Send writes msg as one event with the next id. It implements mcp.Sink.
func (e *eventWriter) Send(_ context.Context, msg []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed && e.ps == nil {
		return errStreamClosed
	}
	e.start()
	id := e.nextID()
	if e.onEvent != nil {
		e.onEvent(id, msg)
	}
	if e.ps != nil {
		e.ps.record(id, msg) // kept for a client that resumes
	}
	if e.closed {
		return errStreamClosed
	}
	return e.writeLocked(sse.Event{ID: id, Data: msg})
}

// replay writes an event recorded earlier, under its original id.
func (e *eventWriter) replay(id string, msg []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errStreamClosed
	}
	e.start()
	return e.writeLocked(sse.Event{ID: id, Data: msg})
}

// writeTimeout bounds one event's write: a client that stops reading its
// stream must not hold up the session's other messages forever.
const writeTimeout = 30 * time.Second

func (e *eventWriter) writeLocked(ev sse.Event) error {
	e.buf = sse.AppendEvent(e.buf[:0], ev)
	// The deadline is lifted again after the write: net/http does not reset
	// it for the next request on a kept-alive connection.
	_ = e.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	defer e.rc.SetWriteDeadline(noDeadline)
	if _, err := e.w.Write(e.buf); err != nil {
		e.closed = true
		return err
	}
	if err := e.rc.Flush(); err != nil {
		e.closed = true
		return err
	}
	return nil
}

// comment writes a keepalive comment line.
func (e *eventWriter) comment() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errStreamClosed
	}
	e.start()
	if _, err := e.w.Write([]byte(": keepalive\n\n")); err != nil {
		e.closed = true
		return err
	}
	return e.rc.Flush()
}

// release stops counting the stream as open, once its handler is done
// with it.
func (e *eventWriter) release() {
	e.mu.Lock()
	if e.started && e.open != nil && !e.released {
		e.released = true
		e.open.Add(-1)
	}
	e.mu.Unlock()
}

// close stops further writes; the handler returning ends the response. A
// write blocked on a client that stopped reading is cut short first, so
// closing never waits behind it.
func (e *eventWriter) close() {
	_ = e.rc.SetWriteDeadline(time.Now())
	e.mu.Lock()
	e.closed = true
	_ = e.rc.SetWriteDeadline(noDeadline)
	e.mu.Unlock()
}

// finish writes the answer to a POST: as the last event if the stream has
// started, else as a plain JSON body, a part at a time (a long result
// from where it came).
func (e *eventWriter) finish(answer jsonrpc.Parts) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ps != nil {
		id := e.nextID()
		data := answer.Bytes()
		e.ps.finish(id, data) // kept for a client that resumes
		if !e.closed {
			e.closed = true
			_ = e.writeLocked(sse.Event{ID: id, Data: data})
		}
		return
	}
	if e.closed {
		return
	}
	if e.started {
		_ = e.writeLocked(sse.Event{ID: e.nextID(), Data: answer.Bytes()})
	} else {
		h := e.w.Header()
		h["Content-Type"] = contentTypeJSON
		e.setSessionID(h)
		if n := answer.Len(); n > chunkedPast {
			// Written as a whole, but net/http would send it chunked: the
			// length said lets a client read it into one buffer of its size.
			h["Content-Length"] = []string{strconv.Itoa(n)}
		}
		status := http.StatusOK
		if e.status != nil {
			status = e.status(answer)
		}
		e.w.WriteHeader(status)
		_, _ = answer.WriteTo(e.w)
	}
	e.closed = true
}
