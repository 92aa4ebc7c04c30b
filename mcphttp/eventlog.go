// eventlog.go keeps the last events of a session's standalone stream so a
// client whose GET stream broke can resume with Last-Event-ID and miss
// nothing that is still kept.

package mcphttp

import "sync"

type loggedEvent struct {
	id  string
	msg []byte
}

type eventLog struct {
	mu     sync.Mutex
	events []loggedEvent // ring, oldest at start
	start  int
	max    int
}

func newEventLog(max int) *eventLog { return &eventLog{max: max} }

func (l *eventLog) add(id string, msg []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := loggedEvent{id, append([]byte(nil), msg...)}
	if len(l.events) < l.max {
		l.events = append(l.events, ev)
		return
	}
	l.events[l.start] = ev
	l.start = (l.start + 1) % l.max
}

// after returns the events after id, and whether id was still kept.
func (l *eventLog) after(id string) ([]loggedEvent, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.events)
	for i := 0; i < n; i++ {
		if l.events[(l.start+i)%n].id == id {
			out := make([]loggedEvent, 0, n-i-1)
			for j := i + 1; j < n; j++ {
				out = append(out, l.events[(l.start+j)%n])
			}
			return out, true
		}
	}
	return nil, false
}
