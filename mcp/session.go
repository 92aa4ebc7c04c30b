// session.go is one client's conversation with a Server, whatever carries
// it. It holds the lifecycle (nothing but initialize and ping before
// initialize) and concurrent requests with their cancellation. It sends the
// server's own requests the other way and routes their answers back.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// ErrSessionClosed is returned by calls on a session that has ended.
var ErrSessionClosed = errors.New("mcp: session closed")

// ErrClientGone is returned by a call to a client that can no longer
// answer (see EndInput).
var ErrClientGone = errors.New("mcp: the client can no longer answer")

// Session is the server side of one MCP session.
type Session struct {
	server   *Server
	id       string
	out      Sink // standalone stream for messages unrelated to a request; may be nil
	identity Identity
	// transport and started are what SessionList shows of it.
	transport string
	started   time.Time

	initialized atomic.Bool
	// resumable: another process may resume the session after this one
	// lets it go (mcphttp's sealed sessions), so what it holds upstream is
	// left open when it ends here, unless the client ended it.
	resumable   atomic.Bool
	endedByUser atomic.Bool
	version     atomic.Pointer[string]
	logLevel    atomic.Int32

	mu         sync.Mutex
	closed     bool
	clientInfo json.RawMessage
	clientCaps json.RawMessage
	inflight   map[callKey]*inflight            // requests being served, by id
	pending    map[string]chan *jsonrpc.Message // our requests awaiting the client
	subscribed map[string]struct{}              // resource URIs
	done       chan struct{}
	inputEnded chan struct{}
	endInput   sync.Once
}

// SessionOptions configures NewSession.
type SessionOptions struct {
	ID       string   // transport's session id ("" for none)
	Out      Sink     // standalone stream, may be nil and set later with SetOut
	Identity Identity // the principal the session belongs to
	// Version pre-negotiates a revision and marks the session initialized.
	Version string
	// ClientInfo and ClientCapabilities are what the client said at
	// initialize, for a session resumed with Version (a replica rebuilding
	// a session another one initialized: mcphttp's sealed sessions).
	ClientInfo         json.RawMessage
	ClientCapabilities json.RawMessage
	// Transport names how the client reached the session (streamable-http,
	// sse, stdio), for SessionList.
	Transport string
}

// NewSession starts a session on s. The transport must Close it.
func (s *Server) NewSession(o SessionOptions) *Session {
	ss := &Session{
		server:     s,
		id:         o.ID,
		out:        o.Out,
		identity:   o.Identity,
		inflight:   map[callKey]*inflight{},
		pending:    map[string]chan *jsonrpc.Message{},
		subscribed: map[string]struct{}{},
		done:       make(chan struct{}),
		inputEnded: make(chan struct{}),
		clientInfo: o.ClientInfo,
		clientCaps: o.ClientCapabilities,
		transport:  o.Transport,
		started:    time.Now(),
	}
	if o.Version != "" {
		v := o.Version
		ss.version.Store(&v)
		ss.initialized.Store(true)
	}
	s.track(ss)
	return ss
}

// ID is the transport's session id.
func (s *Session) ID() string { return s.id }

// Identity is the principal the session is bound to.
func (s *Session) Identity() Identity { return s.identity }

// Version is the negotiated protocol revision ("" before initialize).
func (s *Session) Version() string {
	if v := s.version.Load(); v != nil {
		return *v
	}
	return ""
}

// Initialized reports whether initialize has been answered.
func (s *Session) Initialized() bool { return s.initialized.Load() }

// ClientCapabilities returns the raw capabilities the client declared.
func (s *Session) ClientCapabilities() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientCaps
}

// SetResumable marks the session as one another process may resume after
// this one lets it go: its upstream sessions then outlive its end here,
// unless the client itself ended it (EndedByClient).
func (s *Session) SetResumable() { s.resumable.Store(true) }

// Resumable reports SetResumable.
func (s *Session) Resumable() bool { return s.resumable.Load() }

// MarkEndedByClient records, before Close, that the client ended the
// session (Streamable HTTP's DELETE): it is over everywhere, upstream too.
func (s *Session) MarkEndedByClient() { s.endedByUser.Store(true) }

// EndedByClient reports MarkEndedByClient.
func (s *Session) EndedByClient() bool { return s.endedByUser.Load() }

// ClientInfo is the clientInfo of the initialize request (nil before).
func (s *Session) ClientInfo() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientInfo
}

// Done is closed when the session ends.
func (s *Session) Done() <-chan struct{} { return s.done }

// SetOut sets (or, with nil, clears) the standalone stream.
func (s *Session) SetOut(out Sink) {
	s.mu.Lock()
	s.out = out
	s.mu.Unlock()
}

// Close ends the session: requests in flight are cancelled and calls
// waiting on the client fail.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for _, req := range s.inflight {
		req.cancel(nil)
	}
	close(s.done)
	s.mu.Unlock()
	s.server.untrack(s)
}

// Notify sends a notification on the standalone stream; it is dropped when
// there is none (a Streamable HTTP client that opened no GET stream).
func (s *Session) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	s.mu.Lock()
	out := s.out
	s.mu.Unlock()
	if out == nil {
		return nil
	}
	return out.Send(ctx, jsonrpc.AppendRequest(nil, nil, method, raw))
}

// Handle serves one message from the client. related is where messages
// about it go (for a request: its progress, logs and server-to-client
// requests). It returns the response to write for a request, nil otherwise.
// Handle blocks while a request is served; transports call it from one
// goroutine per request so that a slow call never delays another.
func (s *Session) Handle(ctx context.Context, m *jsonrpc.Message, related Sink) []byte {
	return s.Answer(ctx, m, related).Bytes()
}

// Answer is Handle with the response in parts: a long result stays in
// the buffer it came in (a relayed backend's), for a transport that can
// write it from there.
func (s *Session) Answer(ctx context.Context, m *jsonrpc.Message, related Sink) jsonrpc.Parts {
	switch m.Kind() {
	case jsonrpc.KindResult, jsonrpc.KindError:
		s.deliver(m)
		return jsonrpc.Parts{}
	case jsonrpc.KindNotification:
		s.notification(ctx, m)
		return jsonrpc.Parts{}
	}
	if related == nil {
		related = sinkFunc(s.sendOut)
	}
	if !s.initialized.Load() && m.Method != "initialize" && m.Method != "ping" {
		return jsonrpc.Parts{Head: jsonrpc.AppendError(nil, m.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
			"invalid request: session not initialized (send initialize first)"))}
	}

	// Every transport hands the gate the same identity: the one the
	// session is bound to, unless the transport put one in ctx itself.
	if _, ok := IdentityFrom(ctx); !ok {
		ctx = WithIdentity(ctx, s.identity)
	}
	key := keyOf(m.ID)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The request and its in-flight record in one allocation: this runs
	// for every call a client makes.
	h := &handling{inflight: inflight{cancel: cancel}}
	req := &h.inflight
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return jsonrpc.Parts{Head: jsonrpc.AppendError(nil, m.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: session closed"))}
	}
	s.inflight[key] = req
	s.mu.Unlock()

	h.Request = Request{Session: s, ID: m.ID, Method: m.Method, Params: m.Params, sink: related, abort: cancel, metaRaw: paramsMeta(m.Params)}
	r := &h.Request
	result, err := s.server.serve(ctx, r)
	s.mu.Lock()
	if s.inflight[key] == req {
		delete(s.inflight, key)
	}
	cancelled := req.byClient
	s.mu.Unlock()
	if cancelled {
		// The client said it no longer wants the answer; MCP asks that
		// none be sent.
		return jsonrpc.Parts{}
	}
	if err != nil {
		return jsonrpc.Parts{Head: jsonrpc.AppendError(nil, m.ID, s.server.errorFor(r, err))}
	}
	return jsonrpc.ResultParts(m.ID, result)
}

// serve resolves r, runs its handler chain, turning a panic into -32603,
// and tells the observers how it began and ended.
func (s *Server) serve(ctx context.Context, r *Request) (result json.RawMessage, err error) {
	s.resolve(ctx, r)
	obs := s.opts.Observers
	var start time.Time
	if len(obs) > 0 {
		start = time.Now()
		for _, o := range obs {
			ctx = o.Begin(ctx, r)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("mcp handler panicked", "method", r.Method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			result, err = nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error")
		}
		if len(obs) > 0 {
			e := End{Start: start, Duration: time.Since(start)}
			e.Outcome, e.Code = Classify(r.Method, result, err)
			for i := len(obs) - 1; i >= 0; i-- {
				obs[i].End(ctx, r, e)
			}
		}
	}()
	return s.handler().ServeMCP(ctx, r)
}

// errorFor maps a handler's error to the error object answered.
func (s *Server) errorFor(r *Request, err error) *jsonrpc.Error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	s.log.Error("mcp handler failed", "method", r.Method, "err", err)
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "internal error")
}

func (s *Session) notification(ctx context.Context, m *jsonrpc.Message) {
	switch m.Method {
	case "notifications/initialized":
		// initialize already made the session usable; nothing to do.
	case "notifications/cancelled":
		id, _ := jsonrpc.Lookup(m.Params, "requestId")
		if id == nil {
			return
		}
		s.mu.Lock()
		req := s.inflight[keyOf(jsonrpc.ID(id))]
		if req != nil {
			req.byClient = true
		}
		s.mu.Unlock()
		if req != nil {
			req.cancel(nil)
		}
	default:
		if h := s.server.opts.OnNotification; h != nil {
			h(ctx, s, m)
		}
	}
}

// call sends a server-to-client request on sink and waits for the answer.
func (s *Session) call(ctx context.Context, sink Sink, method string, params json.RawMessage) (json.RawMessage, error) {
	id := s.server.newCallID()
	ch := make(chan *jsonrpc.Message, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrSessionClosed
	}
	s.pending[id.Key()] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id.Key())
		s.mu.Unlock()
	}()
	if err := sink.Send(ctx, jsonrpc.AppendRequest(nil, id, method, params)); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, jsonrpc.RawError(m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		// Close cancels the handlers' contexts as it ends the session;
		// then the session's end is the reason, whichever case won.
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return nil, ErrSessionClosed
		}
		_ = sink.Send(context.WithoutCancel(ctx), jsonrpc.AppendRequest(nil, nil, "notifications/cancelled",
			json.RawMessage(`{"requestId":`+string(id)+`,"reason":"request cancelled"}`)))
		return nil, ctx.Err()
	case <-s.done:
		return nil, ErrSessionClosed
	case <-s.inputEnded:
		return nil, ErrClientGone
	}
}

// EndInput says the client can send nothing more (stdin reached its end):
// requests the server is waiting on the client for fail with ErrClientGone
// at once, while handlers still running may finish and be answered.
func (s *Session) EndInput() {
	s.endInput.Do(func() { close(s.inputEnded) })
}

// deliver routes a client's answer to the call waiting for it: here, or
// on the replica whose request it answers (Options.ForeignAnswer).
func (s *Session) deliver(m *jsonrpc.Message) {
	if s.deliverHere(m) {
		return
	}
	opts := &s.server.opts
	if replica := callReplica(m.ID); replica != "" && replica != opts.Replica && opts.ForeignAnswer != nil && s.id != "" {
		opts.ForeignAnswer(replica, s.id, m.Append(nil))
		return
	}
	s.server.log.Debug("mcp: answer to no pending request", "session", s.id, "id", string(m.ID))
}

// deliverHere gives m to the call of this session waiting for it, if any.
func (s *Session) deliverHere(m *jsonrpc.Message) bool {
	s.mu.Lock()
	ch := s.pending[m.ID.Key()]
	s.mu.Unlock()
	if ch == nil {
		return false
	}
	select {
	case ch <- m.Clone():
	default: // a duplicate answer; the first one won
	}
	return true
}

// callKey is a request's id as a key of Session.inflight. Plain digits,
// as almost every client numbers its requests, are kept as their number,
// which makes no string; any other id as its bytes. Valid JSON has no
// leading zeros, so two ids share a key only if their bytes are equal.
type callKey struct {
	num bool
	n   int64
	raw string
}

func keyOf(id jsonrpc.ID) callKey {
	if n, ok := callNumber(id); ok {
		return callKey{num: true, n: n}
	}
	return callKey{raw: string(id)}
}

// inflight is a request being served.
type inflight struct {
	cancel   context.CancelCauseFunc
	byClient bool // cancelled by notifications/cancelled; guarded by Session.mu
}

// handling is a request being served with its in-flight record.
type handling struct {
	inflight
	Request Request
}

// sendOut writes to the standalone stream, if there is one.
func (s *Session) sendOut(ctx context.Context, msg []byte) error {
	s.mu.Lock()
	out := s.out
	s.mu.Unlock()
	if out == nil {
		return nil
	}
	return out.Send(ctx, msg)
}

type sinkFunc func(ctx context.Context, msg []byte) error

func (f sinkFunc) Send(ctx context.Context, msg []byte) error { return f(ctx, msg) }
