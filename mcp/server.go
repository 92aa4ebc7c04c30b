// server.go is the Server: the method table, the middleware around it, the
// registries, and the set of live sessions that list_changed notifications
// go to.

package mcp

import (
	"bytes"
	"context"
	"crypto/cipher"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Implementation names a client or server in initialize.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Options configures a Server. The zero value serves an empty catalogue to
// everyone.
type Options struct {
	Info         Implementation
	Instructions string
	// InstructionsFrom, if set, gives the instructions at each initialize
	// and server/discover (a gateway's come from the backends up at that
	// moment) and Instructions is ignored. shown reports whether the
	// caller sees at least one entry of an owner (Entry.Owner): what a
	// backend tells a model of its tools is for those who may see them.
	InstructionsFrom func(shown func(owner string) bool) string
	Logger           *slog.Logger // default: discard
	// Gate decides visibility and admission; default: everything open.
	Gate Gate
	// PageSize is the number of entries per list page (default 100).
	PageSize int
	// Pinned, if set, names the tools the search view lists beside the
	// search mode's own (compact.go), by their name at this server.
	Pinned func(name string) bool
	// ValidationErrorsAsResults answers arguments that break a tool's input
	// schema with an isError result (the 2025-11-25 style, so a model can
	// correct itself) instead of JSON-RPC -32602 (the default).
	ValidationErrorsAsResults bool
	// Complete serves completion/complete; when nil the method is not
	// offered and the completions capability is not declared.
	Complete HandlerFunc
	// OnNotification receives client notifications the engine does not
	// handle itself (roots/list_changed, progress, …).
	OnNotification func(ctx context.Context, s *Session, m *jsonrpc.Message)
	// StateKey seals the requestState of multi round-trip requests
	// (mrtr.go): 16, 24 or 32 bytes, the same on every replica that may
	// see a retry. Empty: a random key of this process's.
	StateKey []byte
	// PreviousStateKey, during a rotation of StateKey, is the key it
	// replaced: states it sealed still open until they expire.
	PreviousStateKey []byte
	// Replica names this process among the replicas of one gateway, in
	// the ids of the requests its sessions send clients: "mcpgate-NAME-N".
	// A client's answer to another replica's request that reaches a
	// session here goes to ForeignAnswer, to be handed to that replica
	// (DeliverAnswer there). Without a name, ids are "mcpgate-N".
	Replica       string
	ForeignAnswer func(replica, sessionID string, answer []byte)
	// Observers watch every request: the audit log, metrics, traces
	// (observer.go). Begin is called in order, End in reverse.
	Observers []Observer
	// Unknown, if set, is asked about a tools/call, prompts/get or
	// resources/read naming no entry (name is the tool or prompt name, or the
	// URI). It may still know the entry: a gateway remembers those of a
	// backend that is down. It then returns it, and the error to answer
	// instead of the usual unknown-entry one. A caller the gate would not show
	// the entry gets the usual answer, so nothing hidden is revealed.
	Unknown func(kind EntryKind, name string) (Entry, error)
}

// Server answers MCP sessions.
type Server struct {
	opts Options
	log  *slog.Logger
	gate Gate

	tools     *registry[*Tool]
	resources *registry[*Resource]
	templates *registry[*ResourceTemplate]
	prompts   *registry[*Prompt]

	mu       sync.Mutex
	methods  map[string]Handler
	mws      []Middleware
	admitted []Middleware // inside the gate (UseAdmitted)
	chain    Handler      // built on first use
	sessions map[*Session]struct{}
	byID     map[string][]*Session // the sessions of sessions by id: more than one where a transport reuses an id
	// listeners are the open subscriptions/listen (listen.go).
	listeners map[*listener]struct{}
	// tasks are the tasks its tools run (tasks.go).
	tasks tasks
	// statelessCalls are its requests to stateless clients (stateless.go).
	statelessCalls statelessCalls
	caps           json.RawMessage

	infoJSON    json.RawMessage // opts.Info, encoded once (sessionless results carry it)
	stateOnce   sync.Once
	stateSealer cipher.AEAD
	statePrev   cipher.AEAD // Options.PreviousStateKey's, or nil
	stateErr    error

	callSeq atomic.Int64
}

// NewServer returns a Server with the standard MCP methods in place.
func NewServer(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	s := &Server{
		opts:      opts,
		log:       opts.Logger,
		gate:      opts.Gate,
		sessions:  map[*Session]struct{}{},
		byID:      map[string][]*Session{},
		listeners: map[*listener]struct{}{},
	}
	if s.gate == nil {
		s.gate = openGate{}
	}
	s.tools = newRegistry(s, func(t *Tool) string { return t.Name }, ToolsListChanged)
	s.resources = newRegistry(s, func(r *Resource) string { return r.URI }, ResourcesListChanged)
	s.templates = newRegistry(s, func(t *ResourceTemplate) string { return t.URITemplate }, ResourcesListChanged)
	s.prompts = newRegistry(s, func(p *Prompt) string { return p.Name }, PromptsListChanged)
	s.methods = map[string]Handler{
		"initialize":               HandlerFunc(s.serveInitialize),
		"ping":                     HandlerFunc(servePing),
		"logging/setLevel":         HandlerFunc(serveSetLevel),
		"tools/list":               HandlerFunc(s.serveToolsList),
		"tools/call":               HandlerFunc(s.serveToolsCall),
		"resources/list":           HandlerFunc(s.serveResourcesList),
		"resources/templates/list": HandlerFunc(s.serveTemplatesList),
		"resources/read":           HandlerFunc(s.serveResourcesRead),
		"resources/subscribe":      HandlerFunc(s.serveSubscribe),
		"resources/unsubscribe":    HandlerFunc(serveUnsubscribe),
		"prompts/list":             HandlerFunc(s.servePromptsList),
		"prompts/get":              HandlerFunc(s.servePromptsGet),
		"tasks/get":                HandlerFunc(s.serveTasksGet),
		"tasks/update":             HandlerFunc(s.serveTasksUpdate),
		"tasks/cancel":             HandlerFunc(s.serveTasksCancel),
	}
	if opts.Complete != nil {
		s.methods["completion/complete"] = s.gatedComplete(opts.Complete)
	}
	s.caps = s.capabilities()
	s.infoJSON, _ = json.Marshal(opts.Info)
	return s
}

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Handle sets the handler for a method, replacing a built-in one. It must
// be called before the server serves its first request.
func (s *Server) Handle(method string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.methods[method] = h
	s.chain = nil
}

// Use adds middleware around every method, outermost first. It must be
// called before the server serves its first request.
func (s *Server) Use(mw ...Middleware) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mws = append(s.mws, mw...)
	s.chain = nil
}

// UseAdmitted adds middleware inside the gate, outermost first: it sees
// only the requests the gate admitted (hooks that check or change a call
// the caller may make). It must be called before the server serves its
// first request.
func (s *Server) UseAdmitted(mw ...Middleware) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitted = append(s.admitted, mw...)
	s.chain = nil
}

func (s *Server) handler() Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chain == nil {
		methods := s.methods
		// Params the engine refused (paramkeys.go) are answered before
		// the first middleware: none of them (the relay of tasks/* among
		// them) may act on keys a backend would read otherwise.
		mws := append(append([]Middleware{refusedFirst}, s.mws...), gateMiddleware(s.gate))
		mws = append(mws, s.admitted...)
		s.chain = Chain(HandlerFunc(func(ctx context.Context, r *Request) (json.RawMessage, error) {
			h, ok := methods[r.Method]
			if !ok {
				return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+r.Method,
					map[string]string{"method": r.Method})
			}
			if t := r.Target(); t != nil && t.err != nil {
				return nil, t.err
			}
			res, err := h.ServeMCP(ctx, r)
			if ir, ok := isInputRequired(err); ok && r.meta != nil && inputMethods[r.Method] {
				return s.inputRequiredResult(ctx, r, ir) // asked of the client in the result (mrtr.go)
			}
			return res, err
		}), mws...)
	}
	return s.chain
}

// refusedFirst answers a request whose params resolve refused.
func refusedFirst(next Handler) Handler {
	return HandlerFunc(func(ctx context.Context, r *Request) (json.RawMessage, error) {
		if r.refused != nil {
			return nil, r.refused
		}
		return next.ServeMCP(ctx, r)
	})
}

func (s *Server) track(ss *Session) {
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.byID[ss.id] = append(s.byID[ss.id], ss)
	s.mu.Unlock()
}

func (s *Server) untrack(ss *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[ss]; !ok {
		return
	}
	delete(s.sessions, ss)
	same := slices.DeleteFunc(s.byID[ss.id], func(o *Session) bool { return o == ss })
	if len(same) == 0 {
		delete(s.byID, ss.id)
	} else {
		s.byID[ss.id] = same
	}
}

// Sessions returns the number of live sessions.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// newCallID numbers the server's requests to clients, unique across all
// of its sessions.
func (s *Server) newCallID() jsonrpc.ID {
	id := []byte(`"mcpgate-`)
	if s.opts.Replica != "" {
		id = append(append(id, s.opts.Replica...), '-')
	}
	id = strconv.AppendInt(id, s.callSeq.Add(1), 10)
	return append(id, '"')
}

// callReplica is the replica named in id, one of newCallID's, or "".
func callReplica(id jsonrpc.ID) string {
	rest, ok := bytes.CutPrefix(id, []byte(`"mcpgate-`))
	if !ok {
		return ""
	}
	name, _, ok := bytes.Cut(rest, []byte("-"))
	if !ok {
		return ""
	}
	return string(name)
}

// DeliverAnswer gives answer, a client's answer that another replica
// received (ForeignAnswer there), to the request of session sessionID
// waiting for it here; false when none waits.
func (s *Server) DeliverAnswer(sessionID string, answer []byte) bool {
	m, err := jsonrpc.Parse(answer)
	if err != nil || (m.Kind() != jsonrpc.KindResult && m.Kind() != jsonrpc.KindError) {
		return false
	}
	s.mu.Lock()
	of := slices.Clone(s.byID[sessionID])
	s.mu.Unlock()
	for _, ss := range of {
		if ss.deliverHere(m) {
			return true
		}
	}
	return false
}

// broadcast sends a notification to every initialized session.
func (s *Server) broadcast(method string, params json.RawMessage, to func(*Session) bool) {
	s.mu.Lock()
	targets := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		if ss.Initialized() && (to == nil || to(ss)) {
			targets = append(targets, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range targets {
		if err := ss.Notify(context.Background(), method, params); err != nil {
			s.log.Debug("mcp: notification not delivered", "method", method, "session", ss.id, "err", err)
		}
	}
	s.notifyListeners(method, params)
}

var emptyResult = json.RawMessage(`{}`)

func servePing(context.Context, *Request) (json.RawMessage, error) { return emptyResult, nil }

// decodeParams decodes params into v, answering -32602 when they do not fit.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = emptyResult
	}
	if err := json.Unmarshal(params, v); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+err.Error(), nil)
	}
	return nil
}
