// notify.go fans the upstream's notifications out to every open
// notification stream. Each subscriber has a bounded buffer, and a full
// buffer drops its OLDEST message. The upstream's reader, which also
// delivers the answers every exchange waits for, must never wait on a
// stream nobody reads. A stream must not be ended for being slow either:
// the specification keeps a notification stream open for as long as the
// connection lives. A slow reader thus loses the oldest notifications and
// keeps the newest; Dropped counts what was lost. The server's own streams
// are ordered ones (order.go): they report what they have written, so that
// an exchange's answer is written after the notifications sent before it.

package proxy

import (
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// DefaultNotificationBuffer is the per-subscriber buffer.
const DefaultNotificationBuffer = 64

type hub struct {
	size    int
	log     *slog.Logger
	dropped atomic.Uint64

	grace time.Duration // see order.go

	mu       sync.Mutex
	subs     map[*subscriber]struct{}
	closed   bool
	seq      uint64                   // of the last notification published
	streams  map[*noteStream]struct{} // ordered streams (order.go)
	progress chan struct{}            // closed at a stream's progress; made only when an answer waits
}

type subscriber struct {
	ch      chan json.RawMessage
	dropped bool // logged once
}

func newHub(size int, log *slog.Logger) *hub {
	if size <= 0 {
		size = DefaultNotificationBuffer
	}
	return &hub{size: size, log: log, grace: defaultOrderGrace, subs: map[*subscriber]struct{}{}, streams: map[*noteStream]struct{}{}}
}

// subscribe opens a stream. Cancelling it closes the channel; so does
// closing the hub.
func (h *hub) subscribe() (<-chan json.RawMessage, func()) {
	sub := &subscriber{ch: make(chan json.RawMessage, h.size)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(sub.ch)
		return sub.ch, func() {}
	}
	h.subs[sub] = struct{}{}
	return sub.ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[sub]; ok {
			delete(h.subs, sub)
			close(sub.ch)
		}
	}
}

// publish delivers one notification to every subscriber without waiting.
// The bytes are shared: subscribers must not modify them.
func (h *hub) publish(m *jsonrpc.Message) {
	msg := json.RawMessage(m.Append(nil))
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	for sub := range h.subs {
		h.deliver(sub, msg, m.Method)
	}
	for st := range h.streams {
		st.pushLocked(note{seq: h.seq, msg: msg}, m.Method)
	}
}

// deliver puts msg in sub's buffer, making room by dropping the oldest.
// Only the reader competes with us (publish holds h.mu), so the loop ends
// at the second turn at the latest.
func (h *hub) deliver(sub *subscriber, msg json.RawMessage, method string) {
	for {
		select {
		case sub.ch <- msg:
			return
		default:
		}
		select {
		case <-sub.ch:
			h.dropped.Add(1)
			if !sub.dropped {
				sub.dropped = true
				h.log.Warn("notification stream too slow; dropping its oldest notifications", "method", method, "buffer", h.size)
			}
		default:
		}
	}
}

// close ends every stream.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for sub := range h.subs {
		delete(h.subs, sub)
		close(sub.ch)
	}
	for st := range h.streams {
		delete(h.streams, st)
		st.endLocked()
	}
	h.progressLocked()
}
