// eventlog.go keeps the last events of a stream — a session's standalone
// stream, or a resumable POST stream (resume.go) — so that a client whose
// stream broke can resume with Last-Event-ID and miss nothing still kept.
// What is kept is bounded twice: by count (Options.ReplayEvents) and by
// bytes (Options.ReplayBytes), so that a backend sending large messages
// cannot make a session hold hundreds of them. The newest event is kept
// whatever its size: it may be the answer a resuming client came for.

package mcphttp

import "sync"

type loggedEvent struct {
	id  string
	msg []byte
}

// events is a bounded queue of events, oldest first. Its owner locks it.
type events struct {
	list          []loggedEvent
	bytes         int // of the messages in list
	max, maxBytes int
}

// push adds a copy of msg under id, then drops the oldest events while
// either bound is passed, keeping the newest one.
func (q *events) push(id string, msg []byte) {
	q.list = append(q.list, loggedEvent{id, append([]byte(nil), msg...)})
	q.bytes += len(msg)
	drop := 0
	for len(q.list)-drop > 1 && (len(q.list)-drop > q.max || q.bytes > q.maxBytes) {
		q.bytes -= len(q.list[drop].msg)
		drop++
	}
	if drop > 0 {
		n := copy(q.list, q.list[drop:])
		clear(q.list[n:])
		q.list = q.list[:n]
	}
}

// eventLog is the standalone stream's events, safe for concurrent use.
type eventLog struct {
	mu sync.Mutex
	q  events
}

func newEventLog(max, maxBytes int) *eventLog {
	return &eventLog{q: events{max: max, maxBytes: maxBytes}}
}

func (l *eventLog) add(id string, msg []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.q.push(id, msg)
}

// after returns the events after id, and whether id was still kept.
func (l *eventLog) after(id string) ([]loggedEvent, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, ev := range l.q.list {
		if ev.id == id {
			return append([]loggedEvent(nil), l.q.list[i+1:]...), true
		}
	}
	return nil, false
}
