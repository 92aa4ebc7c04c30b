// legacy.go is the HTTP+SSE server transport of MCP 2024-11-05, which
// clients written before Streamable HTTP still speak. A GET opens an event
// stream whose first event names the URL to POST messages to. Every POST is
// accepted at once with 202, and every answer rides the stream. The stream
// is the session: when the client hangs up, the session and everything it
// was serving end with it.

package mcphttp

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
)

// SSEHandler serves the legacy HTTP+SSE transport in front of an
// mcp.Server. Mount it twice: at /sse, where GET opens a session's stream,
// and at Options.MessagesPath, where the client POSTs with ?sessionId=.
// Like the Streamable handler it leaves DNS-rebinding protection (Guard)
// and authentication to the http.Handlers wrapped around it; a session is
// bound to the mcp.Identity authentication put in the GET's context.
type SSEHandler struct {
	server *mcp.Server
	opts   Options

	mu       sync.Mutex
	sessions map[string]*legacySession
	owned    map[string]int // sessions by budget (Identity.Budget)
	closed   bool
	streams  sync.WaitGroup // GET handlers
	requests sync.WaitGroup // requests being served

	// sessionEnded, when set before serving (tests do), is called after a
	// session has been closed and forgotten.
	sessionEnded func(id string)
}

// legacySession is one GET stream and the session it carries.
type legacySession struct {
	*mcp.Session
	stream *legacyStream
	owner  string // Identity.Key() of the creator: no one else may post to it
	budget string // Identity.Budget() of the creator: whose cap it counts against
}

// NewSSEHandler returns a legacy transport for s.
func NewSSEHandler(s *mcp.Server, opts Options) *SSEHandler {
	return &SSEHandler{server: s, opts: opts.withDefaults(), sessions: map[string]*legacySession{}, owned: map[string]int{}}
}

// ServeHTTP routes GET to the stream and POST to the messages endpoint.
func (h *SSEHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		h.serveStream(w, r)
	case http.MethodPost:
		h.serveMessage(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// Close ends every session (their requests are cancelled and their streams
// end) and waits until no stream is written to any more. Later GETs get 503.
func (h *SSEHandler) Close() error {
	h.mu.Lock()
	h.closed = true
	live := make([]*legacySession, 0, len(h.sessions))
	for _, ls := range h.sessions {
		live = append(live, ls)
	}
	h.mu.Unlock()
	for _, ls := range live {
		ls.Close()
	}
	h.streams.Wait()
	h.requests.Wait()
	return nil
}

// Sessions returns the number of open sessions (one per open stream).
func (h *SSEHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

var (
	errHandlerClosed   = errors.New("mcphttp: handler closed")
	errTooManySessions = errors.New("mcphttp: too many sessions")
	// errIdentitySessions: the caller holds MaxSessionsPerIdentity already.
	errIdentitySessions = errors.New("mcphttp: too many sessions for this identity")
)

// serveStream is the GET: it lives as long as the session does.
func (h *SSEHandler) serveStream(w http.ResponseWriter, r *http.Request) {
	if err := h.server.AdmitSession(r.Context(), "sse"); err != nil {
		refuseStream(w, err)
		return
	}
	identity, _ := mcp.IdentityFrom(r.Context())
	ls, err := h.open(w, identity)
	if errors.Is(err, errIdentitySessions) || errors.Is(err, errTooManySessions) {
		h.opts.sessionRefused(r)
	}
	if errors.Is(err, errIdentitySessions) {
		writeJSON(w, http.StatusTooManyRequests, jsonrpc.AppendError(nil, nil, sessionLimit(h.opts.MaxSessionsPerIdentity)))
		return
	}
	if err != nil {
		http.Error(w, "Service Unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer h.end(ls)

	// A stream outlives any server WriteTimeout; keepalives detect the dead.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache, no-transform")
	hdr.Set("X-Accel-Buffering", "no") // nginx would otherwise hold events back
	endpoint := h.opts.MessagesPath + "?sessionId=" + ls.ID()
	if err := ls.stream.write(sse.Event{Name: "endpoint", Data: []byte(endpoint)}); err != nil {
		return
	}
	h.keepAlive(r.Context(), ls)
}

// open creates and registers a session whose standalone stream is w.
func (h *SSEHandler) open(w http.ResponseWriter, identity mcp.Identity) (*legacySession, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return nil, errHandlerClosed
	case len(h.sessions) >= h.opts.MaxSessions:
		return nil, errTooManySessions
	case h.owned[identity.Budget()] >= h.opts.MaxSessionsPerIdentity:
		return nil, errIdentitySessions
	}
	h.owned[identity.Budget()]++
	stream := newLegacyStream(w)
	ls := &legacySession{stream: stream, owner: identity.Key(), budget: identity.Budget()}
	ls.Session = h.server.NewSession(mcp.SessionOptions{ID: rand.Text(), Out: stream, Identity: identity, Transport: "sse"})
	h.sessions[ls.ID()] = ls
	h.streams.Add(1)
	h.opts.Logger.Debug("legacy sse session opened", "session", ls.ID())
	return ls, nil
}

// keepAlive writes comment lines until the client leaves or the session
// ends; a failed write means the client is gone.
func (h *SSEHandler) keepAlive(ctx context.Context, ls *legacySession) {
	t := time.NewTicker(h.opts.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ls.Done():
			return
		case <-t.C:
			if ls.stream.comment("keepalive") != nil {
				return
			}
		}
	}
}

// end closes the stream before the session, so that answers of the
// requests it cancels fail fast instead of writing to a finished response.
func (h *SSEHandler) end(ls *legacySession) {
	ls.stream.close()
	ls.Close()
	h.mu.Lock()
	if h.sessions[ls.ID()] == ls {
		delete(h.sessions, ls.ID())
		if h.owned[ls.budget]--; h.owned[ls.budget] <= 0 {
			delete(h.owned, ls.budget)
		}
	}
	h.mu.Unlock()
	h.opts.Logger.Debug("legacy sse session closed", "session", ls.ID())
	if h.sessionEnded != nil {
		h.sessionEnded(ls.ID())
	}
	h.streams.Done()
}

// lookup finds a session for the identity presenting its id. A session of
// another identity is reported missing, exactly like an unknown one.
func (h *SSEHandler) lookup(id string, who mcp.Identity) *legacySession {
	h.mu.Lock()
	ls := h.sessions[id]
	h.mu.Unlock()
	if ls == nil || ls.owner != who.Key() {
		return nil
	}
	return ls
}

// serveMessage is the POST: checked, accepted with 202, then served with
// its answer written to the session's stream.
func (h *SSEHandler) serveMessage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sessionId")
	if id == "" {
		http.Error(w, "Bad Request: sessionId query parameter is required", http.StatusBadRequest)
		return
	}
	identity, _ := mcp.IdentityFrom(r.Context())
	ls := h.lookup(id, identity)
	if ls == nil {
		http.Error(w, "Not Found: unknown session", http.StatusNotFound)
		return
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		http.Error(w, "Unsupported Media Type: Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := readBody(w, r, h.opts.MaxBodyBytes, h.opts.BodyTimeout)
	switch {
	case err != nil:
		writePlainBodyError(w, err)
		return
	case !jsonrpc.Valid(body):
		writeJSONError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "parse error: invalid JSON")
		return
	}
	// The POST's own context ends with the 202; the work must not, but it
	// keeps the values (identity, tracing) that middleware put there.
	ctx := context.WithoutCancel(r.Context())
	if jsonrpc.IsBatch(body) {
		h.acceptBatch(ctx, w, ls, body)
		return
	}
	m, err := jsonrpc.Parse(body)
	if err != nil {
		writeParseError(w, err)
		return
	}
	accepted(w)
	if !m.IsRequest() {
		// Answers and notifications are quick and their order matters
		// (a cancellation must not overtake what it cancels).
		ls.Handle(ctx, m, ls.stream)
		return
	}
	h.spawn(func() { h.answer(ctx, ls, ls.Handle(ctx, m, ls.stream)) })
}

// acceptBatch serves a batch where the session's revision allows one, and
// answers it with a refusal on the stream where it does not.
func (h *SSEHandler) acceptBatch(ctx context.Context, w http.ResponseWriter, ls *legacySession, body []byte) {
	msgs, errs, err := jsonrpc.ParseBatch(body)
	if err != nil {
		writeParseError(w, err)
		return
	}
	accepted(w)
	if !mcp.AllowsBatch(ls.Version()) {
		h.answer(ctx, ls, mcp.BatchRefused())
		return
	}
	h.spawn(func() { h.answer(ctx, ls, ls.HandleBatch(ctx, msgs, errs, ls.stream)) })
}

// answer writes a response (if any) to the session's stream.
func (h *SSEHandler) answer(ctx context.Context, ls *legacySession, out []byte) {
	if out == nil {
		return
	}
	if err := ls.stream.Send(ctx, out); err != nil {
		h.opts.Logger.Debug("legacy sse answer not delivered", "session", ls.ID(), "err", err)
	}
}

// spawn runs fn in its own goroutine, so that a slow request never delays
// another; Close waits for it.
func (h *SSEHandler) spawn(fn func()) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.requests.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.requests.Done()
		fn()
	}()
}

// accepted answers 202 and flushes it, so the client is not kept waiting
// while the message is handled.
func accepted(w http.ResponseWriter) {
	w.WriteHeader(http.StatusAccepted)
	_ = http.NewResponseController(w).Flush()
}

// legacyStream is the event stream of one GET: writes are serialized, and
// once the GET has ended every send fails with errStreamClosed instead of
// touching a finished ResponseWriter.
type legacyStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu     sync.Mutex
	closed bool
	buf    []byte
}

func newLegacyStream(w http.ResponseWriter) *legacyStream {
	return &legacyStream{w: w, rc: http.NewResponseController(w)}
}

// Send writes msg as a `message` event; it makes legacyStream an mcp.Sink.
func (s *legacyStream) Send(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.write(sse.Event{Name: "message", Data: msg})
}

func (s *legacyStream) write(ev sse.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = sse.AppendEvent(s.buf[:0], ev)
	err := s.flushLocked()
	if cap(s.buf) > 64<<10 {
		s.buf = nil // do not pin one large answer's buffer for the stream's life
	}
	return err
}

func (s *legacyStream) comment(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(append(append(s.buf[:0], ": "...), text...), "\n\n"...)
	return s.flushLocked()
}

func (s *legacyStream) flushLocked() error {
	if s.closed {
		return errStreamClosed
	}
	_, err := s.w.Write(s.buf)
	if err == nil {
		err = s.rc.Flush()
	}
	if err != nil {
		s.closed = true // the client is gone; the GET handler will notice
	}
	return err
}

// close marks the stream finished. A write blocked on a client that stopped
// reading is cut short by a past deadline, so close never hangs.
func (s *legacyStream) close() {
	if !s.mu.TryLock() {
		_ = s.rc.SetWriteDeadline(time.Now())
		s.mu.Lock()
	}
	s.closed = true
	s.mu.Unlock()
}
