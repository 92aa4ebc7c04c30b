// streamable.go is the Streamable HTTP server transport: POST carries
// client messages, GET opens the server-to-client stream, DELETE ends a
// session. Each POST is served on its own goroutine (net/http's), so many
// requests on one session run at once and a slow call delays no other.

package mcphttp

import (
	"context"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/fifo"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Header names of the transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-Id"
)

var noDeadline time.Time

// Handler serves an mcp.Server over Streamable HTTP. Mount it at the MCP
// endpoint (conventionally /mcp).
type Handler struct {
	server *mcp.Server
	opts   Options
	table  sessionTable

	stop     chan struct{}
	stopOnce sync.Once
	reaper   sync.WaitGroup

	// streams counts the event streams open now: [0] a 2025 session's
	// (its standalone GET and the POSTs answered as streams), [1] a
	// sessionless request's.
	streams [2]atomic.Int64
}

// NewHandler returns a Streamable HTTP handler for s. Close it to end its
// sessions and its reaper.
func NewHandler(s *mcp.Server, opts Options) *Handler {
	h := &Handler{
		server: s,
		opts:   opts.withDefaults(),
		table:  sessionTable{sessions: map[string]*httpSession{}, owned: map[string]int{}, tombs: fifo.Map[string, struct{}]{Max: maxTombs}},
		stop:   make(chan struct{}),
	}
	if !h.opts.Stateless {
		h.reaper.Add(1)
		go h.reap()
	}
	return h
}

// Close ends every session and stops the reaper.
func (h *Handler) Close() {
	h.stopOnce.Do(func() { close(h.stop) })
	h.reaper.Wait()
	for _, hs := range h.table.all() {
		h.end(hs)
	}
	if h.opts.Sessionless {
		h.server.EndListeners() // answered, so their streams end (mcp/listen.go)
		h.server.EndTasks()     // cancelled, and waited for (mcp/tasks.go)
	}
}

// Sessions is the number of live sessions.
func (h *Handler) Sessions() int { return h.table.len() }

// Streams is the number of event streams open now: those of 2025 sessions
// (a standalone GET, a POST answered as a stream), and those of
// sessionless requests of the 2026-07-28 revision.
func (h *Handler) Streams() (sessions, sessionless int) {
	return int(h.streams[0].Load()), int(h.streams[1].Load())
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.Sessionless && r.Method != http.MethodPost && sessionlessHeader(r) {
		// 2026-07-28 has no GET stream and no session to DELETE.
		w.Header().Set("Allow", "POST")
		writeJSONError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "Method Not Allowed")
		return
	}
	if v := r.Header.Get(HeaderProtocolVersion); v != "" && !mcp.IsSupportedVersion(v) && (r.Method != http.MethodPost || !h.opts.Sessionless) {
		writeJSONError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
			"Bad Request: unsupported MCP-Protocol-Version "+v)
		return
	}
	switch {
	case r.Method == http.MethodPost:
		h.post(w, r)
	case r.Method == http.MethodGet && !h.opts.Stateless:
		h.get(w, r)
	case r.Method == http.MethodDelete && !h.opts.Stateless:
		h.delete(w, r)
	default:
		if h.opts.Stateless {
			w.Header().Set("Allow", "POST")
		} else {
			w.Header().Set("Allow", "GET, POST, DELETE")
		}
		writeJSONError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "Method Not Allowed")
	}
}

// lookup finds the session a request names, answering 400 or 404 itself
// when it cannot. A session of another identity is reported exactly as an
// unknown one.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(HeaderSessionID)
	if id == "" {
		writeJSONError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required")
		return nil
	}
	hs := h.table.get(id)
	if hs == nil && h.opts.Sealer != nil {
		hs = h.resume(r, id)
	}
	if id, _ := mcp.IdentityFrom(r.Context()); hs == nil || !id.HasKey(hs.owner) {
		writeJSONError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "Session not found")
		return nil
	}
	if !h.touchShared(r.Context(), hs) { // ended on another replica
		h.end(hs)
		writeJSONError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "Session not found")
		return nil
	}
	return hs
}

func identityKey(r *http.Request) string {
	id, _ := mcp.IdentityFrom(r.Context())
	return id.Key()
}

// budgetKey is whose cap on sessions r's session counts against: the
// principal's (mcp.Identity.Budget), not the credential's, so that minting
// grants does not multiply the cap.
func budgetKey(r *http.Request) string {
	id, _ := mcp.IdentityFrom(r.Context())
	return id.Budget()
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	if !acceptsBoth(r.Header.Get("Accept")) {
		writeJSONError(w, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest,
			"Not Acceptable: Accept must list both application/json and text/event-stream")
		return
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		writeJSONError(w, http.StatusUnsupportedMediaType, jsonrpc.CodeInvalidRequest,
			"Unsupported Media Type: Content-Type must be application/json")
		return
	}
	body, err := readBody(w, r, h.opts.MaxBodyBytes, h.opts.BodyTimeout)
	if err != nil {
		writeBodyError(w, err)
		return
	}
	if jsonrpc.IsBatch(body) {
		h.postBatch(w, r, body)
		return
	}
	m, err := jsonrpc.Parse(body)
	if err != nil {
		writeParseError(w, err)
		return
	}
	// The era is decided per request (sessionless.go).
	if h.opts.Sessionless {
		if sr, ok := mcp.ReadSessionless(m); ok || sessionlessHeader(r) {
			h.serveSessionless(w, r, m, &sr, ok)
			return
		}
		if v := r.Header.Get(HeaderProtocolVersion); v != "" && !mcp.IsSupportedVersion(v) {
			writeJSONError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
				"Bad Request: unsupported MCP-Protocol-Version "+v)
			return
		}
	}
	if m.Method == "initialize" && m.IsRequest() {
		h.initialize(w, r, m)
		return
	}
	if h.opts.Stateless {
		h.serveStateless(w, r, m)
		return
	}
	hs := h.hold(w, r)
	if hs == nil {
		return
	}
	defer hs.release()
	if !m.IsRequest() {
		hs.sess.Handle(r.Context(), m, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.answer(w, r, hs, func(ctx context.Context, sink mcp.Sink) jsonrpc.Parts {
		return hs.sess.Answer(ctx, m, sink)
	})
}

// primingRetry is the reconnection time, in milliseconds, that a POST's
// event stream opens with, in its priming event (SEP-1699; clients of
// 2025-11-25 and later): a client whose stream breaks waits this long
// before it asks again.
const primingRetry = 1000

// answer serves request(s) on the POST's own stream: plain JSON unless a
// related message must go out first, then an event stream ending with the
// answer.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, hs *httpSession, serve func(context.Context, mcp.Sink) jsonrpc.Parts) {
	h.answerWith(w, r, hs, nil, serve)
}

// answerWith is answer with the HTTP status of a plain JSON answer chosen
// by status (nil: 200).
func (h *Handler) answerWith(w http.ResponseWriter, r *http.Request, hs *httpSession, status func(jsonrpc.Parts) int, serve func(context.Context, mcp.Sink) jsonrpc.Parts) {
	var ew *eventWriter
	if hs != nil {
		ew = newEventWriter(w, "")
		ew.post = hs.postSeq.Add(1)
		ew.sessionID = hs.idHeader
		if hs.sess.Version() >= mcp.Version20251125 {
			ew.priming, ew.streams, ew.keep, ew.keepB = primingRetry, &hs.posts, h.opts.ReplayEvents, h.opts.ReplayBytes
		}
		ew.open = &h.streams[0]
	} else {
		ew = newEventWriter(w, "s")
		ew.open = &h.streams[1]
	}
	defer ew.release()
	ew.status = status
	ctx := r.Context()
	if prefersStream(r.Header.Get("Accept")) {
		ew.mu.Lock()
		ew.start()
		ps := ew.ps
		ew.mu.Unlock()
		if ps != nil {
			// The client may leave and come back for the answer
			// (resume.go): its leaving cancels nothing at once.
			var cancel context.CancelFunc
			ctx, cancel = h.detached(r, hs, ps)
			defer cancel()
		}
	}
	out := serve(ctx, ew)
	if out.Head == nil {
		ew.mu.Lock()
		started := ew.started
		ew.closed = true
		ew.mu.Unlock()
		if !started {
			w.WriteHeader(http.StatusAccepted)
		}
		if ew.ps != nil {
			ew.ps.end()
			hs.posts.closed(ew.post, keptStreamsBytes*h.opts.ReplayBytes)
		}
		return
	}
	ew.finish(out)
	if ew.ps != nil {
		hs.posts.closed(ew.post, keptStreamsBytes*h.opts.ReplayBytes)
	}
}

func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	if h.opts.Stateless {
		h.answer(w, r, nil, func(ctx context.Context, sink mcp.Sink) jsonrpc.Parts {
			return jsonrpc.Parts{Head: h.server.ServeStateless(h.withIdentity(ctx, r), m, h.statelessVersion(r), sink)}
		})
		return
	}
	if r.Header.Get(HeaderSessionID) != "" {
		if hs := h.table.get(r.Header.Get(HeaderSessionID)); hs != nil && hs.owner == identityKey(r) {
			writeJSONError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Bad Request: session already initialized")
			return
		}
	}
	owner, budget := identityKey(r), budgetKey(r)
	// With shared sessions the per-identity cap is theirs (every
	// replica's sessions count); this replica's table only holds places.
	limit := h.opts.MaxSessionsPerIdentity
	if h.opts.Shared != nil {
		limit = math.MaxInt
	}
	if !h.table.reserve(budget, limit) {
		h.opts.sessionRefused(r)
		writeJSON(w, http.StatusTooManyRequests, jsonrpc.AppendError(nil, m.ID, sessionLimit(h.opts.MaxSessionsPerIdentity)))
		return
	}
	if !h.makeRoom(budget) {
		h.table.unreserve(budget)
		h.opts.sessionRefused(r)
		writeJSONError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "Service Unavailable: too many sessions")
		return
	}
	sid := newSessionID()
	shared := h.opts.Shared != nil
	if shared {
		ok, err := h.opts.Shared.Open(r.Context(), ownerHash(budget), sid, h.opts.MaxSessionsPerIdentity, h.opts.IdleTimeout)
		switch {
		case err != nil:
			h.table.unreserve(budget)
			h.opts.Logger.Warn("shared sessions unreachable: initialize refused", "err", err)
			writeJSONError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "Service Unavailable: sessions cannot be opened now")
			return
		case !ok:
			h.table.unreserve(budget)
			h.opts.sessionRefused(r)
			writeJSON(w, http.StatusTooManyRequests, jsonrpc.AppendError(nil, m.ID, sessionLimit(h.opts.MaxSessionsPerIdentity)))
			return
		}
	}
	hs := &httpSession{id: sid, sid: sid, owner: owner, budget: budget, events: newEventLog(h.opts.ReplayEvents, h.opts.ReplayBytes)}
	hs.sess = h.server.NewSession(mcp.SessionOptions{ID: sid, Out: hs, Identity: identityOf(r), Transport: "streamable-http"})
	hs.touch()
	hs.sharedAt.Store(time.Now().UnixNano())
	hs.busy.Add(1)
	defer hs.busy.Add(-1)
	out := hs.sess.Handle(r.Context(), m, nil)
	if !hs.sess.Initialized() { // refused: no session comes of it
		h.table.unreserve(budget)
		hs.sess.Close()
		if shared {
			_ = h.opts.Shared.End(context.WithoutCancel(r.Context()), ownerHash(budget), sid)
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	if h.opts.Sealer != nil {
		h.seal(r.Context(), hs)
	}
	hs.idHeader = []string{hs.id}
	h.table.add(hs)
	w.Header().Set(HeaderSessionID, hs.id)
	writeJSON(w, http.StatusOK, out)
}

// hold finds the request's session (answering the request itself when
// there is none, and returning nil) and marks it busy and used until its
// release, so that the reaper leaves it alone meanwhile.
func (h *Handler) hold(w http.ResponseWriter, r *http.Request) *httpSession {
	hs := h.lookup(w, r)
	if hs == nil {
		return nil
	}
	hs.busy.Add(1)
	hs.touch()
	return hs
}

// release ends a hold.
func (hs *httpSession) release() { hs.busy.Add(-1) }

func identityOf(r *http.Request) mcp.Identity {
	id, _ := mcp.IdentityFrom(r.Context())
	return id
}

// serveStateless answers one message on the engine's sessionless path
// (mcp.Server.ServeStateless), as a 2026-07-28 request is served; the
// revision comes from the header (2025-03-26 when absent, as the
// specification says).
func (h *Handler) serveStateless(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	version := h.statelessVersion(r)
	if !m.IsRequest() {
		h.server.ServeStateless(h.withIdentity(r.Context(), r), m, version, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.answer(w, r, nil, func(ctx context.Context, sink mcp.Sink) jsonrpc.Parts {
		return jsonrpc.Parts{Head: h.server.ServeStateless(h.withIdentity(ctx, r), m, version, sink)}
	})
}

// withIdentity gives ctx the caller's identity, as a session bound to it
// would (the zero identity when authentication put none in the request).
func (h *Handler) withIdentity(ctx context.Context, r *http.Request) context.Context {
	if _, ok := mcp.IdentityFrom(ctx); ok {
		return ctx
	}
	return mcp.WithIdentity(ctx, identityOf(r))
}

func (h *Handler) statelessVersion(r *http.Request) string {
	if v := r.Header.Get(HeaderProtocolVersion); v != "" {
		return v
	}
	return mcp.Version20250326
}

func (h *Handler) postBatch(w http.ResponseWriter, r *http.Request, body []byte) {
	msgs, errs, err := jsonrpc.ParseBatch(body)
	if err != nil {
		writeParseError(w, err)
		return
	}
	for i, m := range msgs {
		if errs[i] == nil && m.Method == "initialize" {
			writeJSONError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Bad Request: initialize must not be batched")
			return
		}
	}
	if h.opts.Stateless {
		version := h.statelessVersion(r)
		if !mcp.AllowsBatch(version) {
			writeJSON(w, http.StatusBadRequest, mcp.BatchRefused())
			return
		}
		h.answer(w, r, nil, func(ctx context.Context, sink mcp.Sink) jsonrpc.Parts {
			return jsonrpc.Parts{Head: h.server.ServeStatelessBatch(h.withIdentity(ctx, r), msgs, errs, version, sink)}
		})
		return
	}
	hs := h.hold(w, r)
	if hs == nil {
		return
	}
	defer hs.release()
	sess := hs.sess
	if !mcp.AllowsBatch(sess.Version()) {
		writeJSON(w, http.StatusBadRequest, mcp.BatchRefused())
		return
	}
	h.answer(w, r, hs, func(ctx context.Context, sink mcp.Sink) jsonrpc.Parts {
		return jsonrpc.Parts{Head: sess.HandleBatch(ctx, msgs, errs, sink)}
	})
}
