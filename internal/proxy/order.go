// order.go keeps the MCP server's order between its notifications and an
// exchange's answer on the wire. The upstream's reader hands every
// notification to the hub before it hands over the answer that followed it.
// But the notification channels and the answer are written by different
// goroutines. Without a barrier, a progress or log message the server sent
// just before its result often reached the gateway after it, when the call
// was over and the message had no one to go to.
//
// So each notification gets a sequence number as it is published, and each
// stream (a notification channel, a notifications path) reports what it has
// written. An answer is written only once every stream of its form has
// written every notification published before the answer came (await). A
// slow stream may drop them instead, under the policy of notify.go.
//
// A stream that holds an answer back for longer than the grace stops
// holding answers back until it has caught up (written everything it was
// given): it keeps its place and its drop-oldest policy, and answers go on
// without it. On the framed connection that never happens for a healthy
// connection: its channels and its answers share one socket, and a stream
// whose writes stall means a socket whose writes stall. The grace is for a
// notifications path nobody reads, which must not hold every per-path
// answer back forever.

package proxy

import (
	"context"
	"encoding/json"
	"time"
)

// streamForm is the form a notification stream is served on; an answer
// waits only for the streams of its own form (the other form is another
// connection, whose order against this one no client can see).
type streamForm uint8

const (
	formFramed streamForm = iota + 1
	formPath
)

// defaultOrderGrace is how long one stream may hold an answer back before
// answers stop waiting for it (until it catches up).
const defaultOrderGrace = time.Second

type note struct {
	seq uint64
	msg json.RawMessage
}

// noteStream is one ordered notification stream: a ring of at most
// hub.size notifications, and the one its writer holds. Its fields are
// guarded by hub.mu.
type noteStream struct {
	h       *hub
	form    streamForm
	ring    []note
	head, n int
	inHand  uint64        // the notification being written; 0: none
	wake    chan struct{} // closed at a push or the end; made only when the writer waits
	ended   bool
	dropped bool // logged once
	lagging bool // held an answer back for the grace; skipped until it catches up
}

// openStream opens an ordered stream of form: every notification
// published from now on.
func (h *hub) openStream(form streamForm) *noteStream {
	st := &noteStream{h: h, form: form, ring: make([]note, h.size)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		st.ended = true
		return st
	}
	h.streams[st] = struct{}{}
	return st
}

// pushLocked gives st one notification, making room by dropping the
// oldest.
func (st *noteStream) pushLocked(n note, method string) {
	if st.n == len(st.ring) {
		st.ring[st.head] = note{}
		st.head = (st.head + 1) % len(st.ring)
		st.n--
		st.h.dropped.Add(1)
		st.h.progressLocked()
		if !st.dropped {
			st.dropped = true
			st.h.log.Warn("notification stream too slow; dropping its oldest notifications", "method", method, "buffer", st.h.size)
		}
	}
	st.ring[(st.head+st.n)%len(st.ring)] = n
	st.n++
	st.signalLocked()
}

func (st *noteStream) signalLocked() {
	if st.wake != nil {
		close(st.wake)
		st.wake = nil
	}
}

// next reports the notification it returned last as written, and returns
// the next one; ok is false once the stream has ended (the hub closed).
func (st *noteStream) next(ctx context.Context) (msg json.RawMessage, ok bool, err error) {
	h := st.h
	h.mu.Lock()
	if st.inHand != 0 {
		st.inHand = 0
		h.progressLocked()
	}
	for st.n == 0 {
		st.lagging = false // caught up
		if st.ended {
			h.mu.Unlock()
			return nil, false, nil
		}
		if st.wake == nil {
			st.wake = make(chan struct{})
		}
		wake := st.wake
		h.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		h.mu.Lock()
	}
	n := st.ring[st.head]
	st.ring[st.head] = note{}
	st.head = (st.head + 1) % len(st.ring)
	st.n--
	st.inHand = n.seq
	h.mu.Unlock()
	return n.msg, true, nil
}

// close ends the stream: it holds no answer back any more.
func (st *noteStream) close() {
	h := st.h
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.streams, st)
	st.endLocked()
	h.progressLocked()
}

func (st *noteStream) endLocked() {
	st.ended = true
	st.n, st.inHand = 0, 0
	st.signalLocked()
}

// behindLocked reports whether st has not yet written (or dropped) every
// notification up to seq.
func (st *noteStream) behindLocked(seq uint64) bool {
	if st.inHand != 0 && st.inHand <= seq {
		return true
	}
	return st.n > 0 && st.ring[st.head].seq <= seq
}

// progressLocked wakes the answers waiting in await.
func (h *hub) progressLocked() {
	if h.progress != nil {
		close(h.progress)
		h.progress = nil
	}
}

// mark is the sequence number of the last notification published: an
// answer taken from the upstream after it follows all of them.
func (h *hub) mark() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// await returns once every stream of form has written or dropped every
// notification up to seq, skipping a stream that holds it back for longer
// than the grace (see the top of this file). It returns early only when
// ctx ends.
func (h *hub) await(ctx context.Context, form streamForm, seq uint64) {
	var grace <-chan time.Time
	for {
		h.mu.Lock()
		held := false
		for st := range h.streams {
			if st.form == form && !st.lagging && st.behindLocked(seq) {
				held = true
				break
			}
		}
		if !held {
			h.mu.Unlock()
			return
		}
		if h.progress == nil {
			h.progress = make(chan struct{})
		}
		progress := h.progress
		h.mu.Unlock()
		if grace == nil {
			t := time.NewTimer(h.grace)
			defer t.Stop()
			grace = t.C
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return
		case <-grace:
			h.skipLaggards(form, seq)
		}
	}
}

// skipLaggards marks the streams still holding seq back as lagging.
func (h *hub) skipLaggards(form streamForm, seq uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for st := range h.streams {
		if st.form == form && !st.lagging && st.behindLocked(seq) {
			st.lagging = true
			h.log.Warn("notification stream holds answers back; answers no longer wait for it until it catches up", "grace", h.grace)
		}
	}
}
