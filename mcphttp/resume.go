// resume.go lets a client whose POST stream broke pick it up again with a
// GET carrying Last-Event-ID (SEP-1699, MCP 2025-11-25). The stream opens
// with a priming event, so the client holds an id even when it lost the
// stream before any message. Every event of the stream is kept, bounded.
// The request goes on being served when the client leaves: the
// specification asks that a disconnection not be taken for a
// cancellation, which is what notifications/cancelled is for. A resuming
// GET gets the events after its id, then the rest as they come, and ends
// with the answer.

package mcphttp

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// keptPostStreams bounds the finished streams a session keeps for
// clients that have not resumed yet, and keptStreamsBytes the bytes of
// their events, in units of Options.ReplayBytes.
const (
	keptPostStreams  = 16
	keptStreamsBytes = 4
)

// postStream is one POST's event stream as it can be resumed.
type postStream struct {
	mu     sync.Mutex
	events events // bounded (eventlog.go)
	done   bool
	ended  chan struct{} // closed once the answer is logged
	resume *eventWriter  // the GET carrying the stream now, if any
}

// record logs an event of the stream and passes it to a resuming GET.
func (p *postStream) record(id string, msg []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events.push(id, msg)
	if p.resume != nil && p.resume.replay(id, msg) != nil {
		p.resume = nil
	}
}

// finish logs the answer and ends the stream.
func (p *postStream) finish(id string, answer []byte) {
	p.record(id, answer)
	p.mu.Lock()
	if !p.done {
		p.done = true
		close(p.ended)
	}
	p.mu.Unlock()
}

// end ends a stream that got no answer (its request was cancelled): a
// resuming GET stops waiting.
func (p *postStream) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.done = true
		close(p.ended)
	}
}

// postStreams are a session's resumable POST streams, by POST number.
type postStreams struct {
	mu       sync.Mutex
	streams  map[uint64]*postStream
	finished []uint64 // in the order they finished
}

// open registers the stream of POST n, keeping at most max events and
// maxBytes of them.
func (ps *postStreams) open(n uint64, max, maxBytes int) *postStream {
	p := &postStream{events: events{max: max, maxBytes: maxBytes}, ended: make(chan struct{})}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.streams == nil {
		ps.streams = map[uint64]*postStream{}
	}
	ps.streams[n] = p
	return p
}

// closed keeps the stream of POST n for a while after it finished, for a
// client that lost it: the last keptPostStreams of them, and fewer when
// together they hold more than keptBytes of events. Whether the answer
// reached the POST's own response cannot be told (a write to a connection
// the client dropped may succeed into its buffers).
func (ps *postStreams) closed(n uint64, keptBytes int) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.finished = append(ps.finished, n)
	total := 0
	for _, f := range ps.finished {
		total += ps.streams[f].size()
	}
	for len(ps.finished) > 1 && (len(ps.finished) > keptPostStreams || total > keptBytes) {
		total -= ps.streams[ps.finished[0]].size()
		delete(ps.streams, ps.finished[0])
		ps.finished = ps.finished[1:]
	}
}

// size is the bytes of the events p keeps (0 for nil).
func (p *postStream) size() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.events.bytes
}

func (ps *postStreams) get(n uint64) *postStream {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.streams[n]
}

// postEventID splits a POST stream's event id, "p<post>-<seq>".
func postEventID(id string) (post, seq uint64, ok bool) {
	rest, found := strings.CutPrefix(id, "p")
	if !found {
		return 0, 0, false
	}
	p, s, found := strings.Cut(rest, "-")
	if !found {
		return 0, 0, false
	}
	post, err1 := strconv.ParseUint(p, 10, 64)
	seq, err2 := strconv.ParseUint(s, 10, 64)
	return post, seq, err1 == nil && err2 == nil
}

// resumePost serves a GET whose Last-Event-ID names an event of one of the
// session's POST streams, and reports whether it did.
func (h *Handler) resumePost(w http.ResponseWriter, r *http.Request, hs *httpSession, lastID string) bool {
	post, seq, ok := postEventID(lastID)
	if !ok {
		return false
	}
	p := hs.posts.get(post)
	if p == nil {
		return false
	}
	ew := newEventWriter(w, "")
	ew.sessionID = hs.idHeader
	ew.open = &h.streams[0]
	defer ew.release()
	p.mu.Lock()
	ew.mu.Lock()
	ew.start()
	ew.mu.Unlock()
	for _, ev := range p.events.list {
		if _, s, _ := postEventID(ev.id); s > seq {
			_ = ew.replay(ev.id, ev.msg)
		}
	}
	done := p.done
	if !done {
		p.resume = ew // what comes next goes here too
	}
	p.mu.Unlock()
	if !done {
		select {
		case <-p.ended:
		case <-r.Context().Done():
		case <-hs.sess.Done():
		case <-h.stop:
		}
		p.mu.Lock()
		if p.resume == ew {
			p.resume = nil
		}
		p.mu.Unlock()
	}
	ew.close()
	return true
}

// resumeGrace is how long a request whose client left its stream goes on
// without a client coming back for it with a resuming GET. It is long
// enough for one that waits the priming event's retry. It is short enough
// that a client gone for good neither keeps a backend call open until its
// timeout nor holds up the server's shutdown.
const resumeGrace = 5 * time.Second

// detached is r's context without the POST's own end. A resumable stream's
// request goes on after its client leaves: while a GET carries the stream,
// or for resumeGrace after the last one left. It ends with the session and
// the handler.
func (h *Handler) detached(r *http.Request, hs *httpSession, p *postStream) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	go func() {
		defer cancel()
		select { // the client is on the POST itself
		case <-r.Context().Done():
		case <-ctx.Done():
			return
		}
		t := time.NewTimer(resumeGrace)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hs.sess.Done():
				return
			case <-h.stop:
				return
			case <-p.ended:
				return
			case <-t.C:
				if !p.carried() {
					return // nobody came back for it
				}
				t.Reset(resumeGrace)
			}
		}
	}()
	return ctx, cancel
}

// carried reports whether a GET carries the stream now.
func (p *postStream) carried() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resume != nil
}
