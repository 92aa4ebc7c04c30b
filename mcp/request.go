// request.go is what a handler sees of one incoming request, including the
// way back to the client for messages related to it: progress, log
// messages, and server-to-client requests such as sampling and elicitation.

package mcp

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A Sink carries messages from server to client: the response stream of one
// HTTP POST, a session's standalone stream, or stdout.
type Sink interface {
	// Send writes one JSON-RPC message. It must be safe for concurrent use.
	Send(ctx context.Context, msg []byte) error
}

// Request is one request being served. Session is nil for a sessionless
// request (2026-07-28): what it says of itself is in its _meta (Version,
// ClientCapabilities).
type Request struct {
	Session *Session
	ID      jsonrpc.ID
	Method  string
	Params  json.RawMessage

	sink   Sink   // where messages related to this request go
	target Target // the entry it names (target.go), when targeted
	// targeted reports a method that names an entry.
	targeted bool
	// refused is the answer to params the engine refuses before any
	// middleware (paramkeys.go).
	refused error
	abort   context.CancelCauseFunc // ends the request's context (Abort)
	meta    *requestMeta            // a sessionless request's (sessionless.go)
	// metaRaw is params._meta, looked up once as the request is made
	// (nil when there is none): every reader of _meta reads it here.
	metaRaw json.RawMessage
	// actingAs is whom the request was made as where it was relayed
	// (SetActingAs); deniedBy the gate's rule that refused it
	// (SetDeniedBy); redacted what was taken out of its answer
	// (SetRedacted).
	actingAs, deniedBy, redacted string
	// hooks are what interceptors that did not deny it came to, when
	// not allowing it plainly (AddHook).
	hooks string
}

// SetActingAs records whom a relay made the request as at its upstream,
// when not as the gateway itself: "vault:BACKEND", an exchanged token's
// subject. Observers read it once the request has ended (ActingAs).
func (r *Request) SetActingAs(who string) {
	if r != nil { // a call with no request: nobody to record it for
		r.actingAs = who
	}
}

// ActingAs is what SetActingAs recorded ("": the relay's own identity).
func (r *Request) ActingAs() string { return r.actingAs }

// SetDeniedBy records the name of the gate's rule that refused the
// request, for the observers (DeniedBy).
func (r *Request) SetDeniedBy(rule string) {
	if r != nil {
		r.deniedBy = rule
	}
}

// DeniedBy is what SetDeniedBy recorded ("": no rule refused it).
func (r *Request) DeniedBy() string { return r.deniedBy }

// DeniedByInterceptor begins DeniedBy when an interceptor refused the
// request ("interceptor:dlp"); a policy rule's name stands alone.
const DeniedByInterceptor = "interceptor:"

// SetRedacted records what an interceptor took out of the answer, as
// pattern=count pairs, for the observers (Redacted).
func (r *Request) SetRedacted(counts string) {
	if r != nil {
		r.redacted = counts
	}
}

// Redacted is what SetRedacted recorded ("": nothing).
func (r *Request) Redacted() string { return r.redacted }

// AddHook records what an interceptor came to, as name:outcome (one that
// failed open, one that changed the call), for the observers (Hooks).
func (r *Request) AddHook(name, outcome string) {
	if r == nil {
		return
	}
	if r.hooks != "" {
		r.hooks += " "
	}
	r.hooks += name + ":" + outcome
}

// Hooks is what AddHook recorded, space-separated ("": nothing).
func (r *Request) Hooks() string { return r.hooks }

// ReplaceArguments puts args, a JSON object, in place of the arguments of
// a tools/call or prompts/get, whose entry and _meta stay as they were.
// The params so made pass the engine's checks of their keys again.
func (r *Request) ReplaceArguments(args json.RawMessage) error {
	if r.Method != "tools/call" && r.Method != "prompts/get" {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s has no arguments to replace", r.Method)
	}
	if len(args) == 0 || args[0] != '{' || !json.Valid(args) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "the arguments that replace %s's are not a JSON object", r.Method)
	}
	params, err := jsonrpc.SetMember(r.Params, "arguments", args)
	if err != nil {
		return err
	}
	if err := checkParamKeys(r.Method, params); err != nil {
		return err
	}
	r.Params = params
	return nil
}

// ClientName is the name the client gave itself: at initialize, or in
// the request's own _meta (2026-07-28); "" when it gave none.
func (r *Request) ClientName() string {
	if r.Session != nil {
		name, _ := jsonrpc.LookupString(r.Session.ClientInfo(), "name")
		return name
	}
	info, _ := jsonrpc.Lookup(r.metaRaw, MetaClientInfo)
	name, _ := jsonrpc.LookupString(info, "name")
	return name
}

// Meta is the request's params._meta object, raw, or nil.
func (r *Request) Meta() json.RawMessage { return r.metaRaw }

// Abort ends the context the request is served with, with cause
// (context.Cause tells it). Unlike a client's notifications/cancelled, the
// handler's answer is still sent: a handler uses it to give up on work it
// waits for — a relay whose backend went quiet — and answer why.
func (r *Request) Abort(cause error) {
	if r.abort != nil {
		r.abort(cause)
	}
}

// Notify sends a notification related to this request (it travels on the
// same stream as the eventual response, where the transport has one).
func (r *Request) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	return r.sink.Send(ctx, jsonrpc.AppendRequest(nil, nil, method, raw))
}

// Call sends a request to the client — sampling/createMessage,
// elicitation/create, roots/list — on this request's stream and waits for
// the client's answer. A JSON-RPC error from the client is returned as a
// *jsonrpc.Error carrying the client's raw error.
func (r *Request) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	if r.Session == nil && r.Stateless() {
		return r.meta.server.statelessCall(ctx, r.sink, method, raw) // stateless.go
	}
	if r.Session == nil {
		// 2026-07-28 has no requests from the server: it asks for input
		// in its result instead (multi round-trip requests).
		return nil, jsonrpc.NewError(CodeMissingRequiredCapability,
			method+" cannot be sent to a sessionless client", map[string]string{"method": method})
	}
	return r.Session.call(ctx, r.sink, method, raw)
}

// Version is the revision the request is served under: its session's, or
// the one its _meta names.
func (r *Request) Version() string {
	switch {
	case r.Session != nil:
		return r.Session.Version()
	case r.meta != nil:
		return r.meta.version
	}
	return ""
}

// ClientCapabilities are the capabilities of the client that sent the
// request: declared at initialize, or in the request's own _meta.
func (r *Request) ClientCapabilities() json.RawMessage {
	switch {
	case r.Session != nil:
		return r.Session.ClientCapabilities()
	case r.meta != nil:
		return r.meta.capabilities
	}
	return nil
}

// MultiRoundTrip reports a 2026-07-28 request: what its handler needs of
// the client is asked in its result, answered by a retry (mrtr.go).
func (r *Request) MultiRoundTrip() bool { return r.meta != nil && !r.meta.stateless }

// ProgressToken returns the raw progress token the client attached to this
// request in params._meta, or nil.
func (r *Request) ProgressToken() json.RawMessage {
	if r.metaRaw == nil {
		return nil
	}
	tok, _ := jsonrpc.Lookup(r.metaRaw, "progressToken")
	return tok
}

// Progress sends notifications/progress for this request, if the client
// asked for progress. total and message are omitted when zero.
func (r *Request) Progress(ctx context.Context, progress, total float64, message string) error {
	tok := r.ProgressToken()
	if tok == nil {
		return nil
	}
	p := struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Progress      float64         `json:"progress"`
		Total         float64         `json:"total,omitempty"`
		Message       string          `json:"message,omitempty"`
	}{tok, progress, total, message}
	return r.Notify(ctx, "notifications/progress", p)
}

// Log sends a notifications/message at level, if the session's level
// (logging/setLevel) lets it through.
func (r *Request) Log(ctx context.Context, level LogLevel, logger string, data any) error {
	switch {
	case r.Session != nil:
		if !r.Session.logs(level) {
			return nil
		}
	case r.Stateless():
		// A stateless client cannot have asked for a level: all go, as
		// to a session that never set one.
	case r.meta == nil || r.meta.logRank == 0 || levelRank[level] < r.meta.logRank:
		// A sessionless request gets log messages only at or above the
		// level its _meta asked for, and none when it asked for none.
		return nil
	}
	p := struct {
		Level  LogLevel `json:"level"`
		Logger string   `json:"logger,omitempty"`
		Data   any      `json:"data"`
	}{level, logger, data}
	return r.Notify(ctx, "notifications/message", p)
}

func marshalParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	default:
		return json.Marshal(p)
	}
}
