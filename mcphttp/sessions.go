// sessions.go is the table of live Streamable HTTP sessions: ids that
// cannot be guessed, each bound to the identity that created it, and a
// reaper that ends the sessions clients abandon (the conformance suite,
// like many clients, never sends DELETE).

package mcphttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/fifo"
	"github.com/mcpgate/mcpgate/mcp"
)

type httpSession struct {
	id       string   // the Mcp-Session-Id: sid, or the sealed state (sealed.go)
	sid      string   // the session's own random id (what logs name)
	idHeader []string // id as a header value, shared by every response
	owner    string   // Identity.Key of the creator: who may use it
	budget   string   // Identity.Budget of the creator: whose cap it counts against
	sess     *mcp.Session
	lastUsed atomic.Int64 // unix nanoseconds
	busy     atomic.Int32 // POSTs being served and open streams
	events   *eventLog
	posts    postStreams // resumable POST streams (resume.go)

	// postSeq counts POSTs that opened a stream. It is not under mu: Send
	// holds mu while it writes to the GET stream, and a client that stops
	// reading that stream must not stall the session's POSTs.
	postSeq atomic.Uint64

	mu         sync.Mutex
	standalone *eventWriter // the GET stream, if open
	streamSeq  uint64       // events sent on the standalone stream

	// sharedAt is when the shared sessions last heard this one is used
	// (unix nanoseconds; sealed.go).
	sharedAt atomic.Int64
}

// sealed reports whether the session's id is sealed state, which another
// replica may resume.
func (hs *httpSession) sealed() bool { return hs.id != hs.sid }

func (hs *httpSession) touch() { hs.lastUsed.Store(time.Now().UnixNano()) }

// Send carries a message unrelated to any request: into the replay log,
// and onto the GET stream if one is open. It implements mcp.Sink.
func (hs *httpSession) Send(_ context.Context, msg []byte) error {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.streamSeq++
	id := "0-" + strconv.FormatUint(hs.streamSeq, 10)
	hs.events.add(id, msg)
	if hs.standalone == nil {
		return nil
	}
	return hs.standalone.replay(id, msg)
}

type sessionTable struct {
	mu       sync.Mutex
	sessions map[string]*httpSession
	// owned counts, by budget (Identity.Budget), the sessions in the
	// table plus those reserved by an initialize being served.
	owned map[string]int
	// tombs are the sealed sessions ended here by DELETE, kept so that
	// this replica does not resume them from their ids (with no shared
	// sessions to say so), at most maxTombs, the oldest forgotten first.
	tombs fifo.Map[string, struct{}]
}

// maxTombs bounds the ended sealed sessions a table remembers.
const maxTombs = 100_000

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (t *sessionTable) get(id string) *httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[id]
}

// reserve holds a place for a session of owner, unless owner already has
// limit; add or unreserve settles it.
func (t *sessionTable) reserve(owner string, limit int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owned[owner] >= limit {
		return false
	}
	t.owned[owner]++
	return true
}

// unreserve gives back a place reserve held for a session never added.
func (t *sessionTable) unreserve(owner string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.release(owner)
}

func (t *sessionTable) release(owner string) {
	if t.owned[owner]--; t.owned[owner] <= 0 {
		delete(t.owned, owner)
	}
}

// add puts in the session whose place its owner reserved.
func (t *sessionTable) add(hs *httpSession) {
	t.mu.Lock()
	t.sessions[hs.id] = hs
	t.mu.Unlock()
}

// remove deletes the session and reports whether it was there.
func (t *sessionTable) remove(id string) *httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := t.sessions[id]
	if hs != nil {
		delete(t.sessions, id)
		t.release(hs.budget)
	}
	return hs
}

// adopt puts in a session resumed from its sealed id, unless a session of
// that id is there already (a request resuming it at the same moment),
// which it returns instead. Its owner's count grows past any cap: the
// session exists already, and the cap was checked where it was opened.
func (t *sessionTable) adopt(hs *httpSession) *httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	if held := t.sessions[hs.id]; held != nil {
		return held
	}
	t.sessions[hs.id] = hs
	t.owned[hs.budget]++
	return hs
}

// bury remembers that sealed session sid ended here.
func (t *sessionTable) bury(sid string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.tombs.Get(sid); ok {
		return
	}
	t.tombs.Put(sid, struct{}{})
}

// ended reports whether sealed session sid ended here.
func (t *sessionTable) ended(sid string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.tombs.Get(sid)
	return ok
}

func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

// idle returns the sessions unused since before cutoff and not busy.
func (t *sessionTable) idle(cutoff time.Time) []*httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*httpSession
	for _, hs := range t.sessions {
		if hs.busy.Load() == 0 && hs.lastUsed.Load() < cutoff.UnixNano() {
			out = append(out, hs)
		}
	}
	return out
}

// leastRecentlyUsed returns the session unused for longest among those of
// owner that are not busy, else among everyone's, or nil if every session
// is busy. The identity that asks for room pays for it first. One caller
// opening sessions in a loop so pushes out only its own.
func (t *sessionTable) leastRecentlyUsed(owner string) *httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lru, own *httpSession
	for _, hs := range t.sessions {
		if hs.busy.Load() != 0 {
			continue
		}
		if lru == nil || hs.lastUsed.Load() < lru.lastUsed.Load() {
			lru = hs
		}
		if hs.budget == owner && (own == nil || hs.lastUsed.Load() < own.lastUsed.Load()) {
			own = hs
		}
	}
	if own != nil {
		return own
	}
	return lru
}

func (t *sessionTable) all() []*httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*httpSession, 0, len(t.sessions))
	for _, hs := range t.sessions {
		out = append(out, hs)
	}
	return out
}
