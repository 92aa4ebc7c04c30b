// streamable_lifecycle.go is a Streamable HTTP session's life past its
// initialize: the standalone GET stream, DELETE, the room made for a new
// session and the idle ones reaped.

package mcphttp

import (
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// get opens the session's standalone stream for messages unrelated to any
// request: list changes, resource updates, requests from the server.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if !acceptsType(r.Header.Get("Accept"), "text/event-stream") {
		writeJSONError(w, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest,
			"Not Acceptable: Accept must list text/event-stream")
		return
	}
	hs := h.lookup(w, r)
	if hs == nil {
		return
	}
	if last := r.Header.Get(headerLastEventID); last != "" && h.resumePost(w, r, hs, last) {
		return
	}
	ew := newEventWriter(w, "0")
	ew.sessionID = hs.idHeader
	ew.open = &h.streams[0]
	hs.mu.Lock()
	if hs.standalone != nil {
		hs.mu.Unlock()
		writeJSONError(w, http.StatusConflict, jsonrpc.CodeInvalidRequest, "Conflict: only one standalone stream per session")
		return
	}
	hs.standalone = ew
	hs.busy.Add(1)
	ew.mu.Lock()
	ew.start()
	ew.mu.Unlock()
	if last := r.Header.Get(headerLastEventID); last != "" {
		if missed, ok := hs.events.after(last); ok {
			for _, ev := range missed {
				_ = ew.replay(ev.id, ev.msg)
			}
		}
	}
	hs.mu.Unlock()
	defer func() {
		hs.mu.Lock()
		if hs.standalone == ew {
			hs.standalone = nil
		}
		hs.mu.Unlock()
		ew.close()
		ew.release()
		hs.touch()
		hs.busy.Add(-1)
	}()

	tick := time.NewTicker(h.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-hs.sess.Done():
			return
		case <-h.stop:
			return
		case <-tick.C:
			if ew.comment() != nil {
				return
			}
		}
	}
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	hs := h.lookup(w, r)
	if hs == nil {
		return
	}
	hs.sess.MarkEndedByClient()
	h.end(hs)
	if hs.sealed() {
		// No replica resumes it after: the shared sessions forget it, or
		// (without them) this replica remembers it ended.
		if h.opts.Shared != nil {
			if err := h.opts.Shared.End(r.Context(), ownerHash(hs.budget), hs.sid); err != nil {
				h.opts.Logger.Warn("shared sessions unreachable: a deleted session stays open elsewhere until idle", "err", err)
			}
		} else {
			h.table.bury(hs.sid)
		}
	}
	w.WriteHeader(http.StatusOK)
}

// end removes a session and closes it: its requests are cancelled and its
// stream ends.
func (h *Handler) end(hs *httpSession) {
	if h.table.remove(hs.id) == nil {
		return
	}
	hs.sess.Close()
	h.opts.Logger.Debug("mcp session ended", "session", hs.sid)
}

// makeRoom reports whether a new session of owner fits, ending the least
// recently used session that is not busy when the table is full — owner's
// own first. Only as many go as the new one needs: ending every session
// not busy at this instant let one initialize over the cap drop every
// other client between two calls.
func (h *Handler) makeRoom(budget string) bool {
	for h.table.len() >= h.opts.MaxSessions {
		hs := h.table.leastRecentlyUsed(budget)
		if hs == nil {
			return false
		}
		h.end(hs)
	}
	return true
}

func (h *Handler) reap() {
	defer h.reaper.Done()
	every := h.opts.IdleTimeout / 4
	if every < time.Second {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			for _, hs := range h.table.idle(now.Add(-h.opts.IdleTimeout)) {
				h.end(hs)
			}
		}
	}
}
