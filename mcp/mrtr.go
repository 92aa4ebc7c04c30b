// mrtr.go is how a handler asks its client for input — an elicitation, a
// sampling, a roots listing — in both eras. A session's request asks on its
// stream and waits (server-to-client requests, 2025). A sessionless request
// (2026-07-28) cannot: its handler's questions become an
// InputRequiredResult (multi round-trip requests, SEP-2322), and the client
// retries the request with the answers in inputResponses. The handler runs
// again from the start and, asking the same questions, gets the answers
// this time; it must therefore ask before it acts.
//
// The answers gathered over the rounds travel in requestState, sealed with
// AES-GCM under the server's key. It is bound to the caller, the request's
// method and entry, and an expiry. A state that was altered, that comes
// from another caller or request, or that comes too late is refused with
// -32602.

package mcp

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Input is one thing a request asks of its client.
type Input struct {
	// Key is the server's name for it, unique within the request; the
	// client's answer comes back under it.
	Key string
	// Method is elicitation/create, sampling/createMessage or roots/list.
	Method string
	Params any
}

// inputCapability is the client capability each input method needs.
var inputCapability = map[string]string{
	"elicitation/create":     "elicitation",
	"sampling/createMessage": "sampling",
	"roots/list":             "roots",
}

// InputRequired is what Ask returns for a sessionless request whose
// answers are not all there yet: the handler returns it, and the engine
// answers the request with an InputRequiredResult asking for them.
type InputRequired struct {
	inputs []Input
}

func (e *InputRequired) Error() string { return "mcp: input required from the client" }

// inputMethods may answer with an InputRequiredResult.
var inputMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// Ask gets inputs from the client and returns its answers, in order. A
// session's request asks each on its stream in turn. A sessionless
// request answers from what the client sent with its retry
// (inputResponses, and the answers of earlier rounds in requestState);
// when some are missing, Ask returns an *InputRequired naming all of them,
// which the handler returns as its error. Asking for what the client did
// not declare it can give is -32021; an answer that is not an object is
// -32602.
func (r *Request) Ask(ctx context.Context, inputs ...Input) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(inputs))
	if r.meta == nil || r.meta.stateless {
		for i, in := range inputs {
			res, err := r.Call(ctx, in.Method, in.Params)
			if err != nil {
				return nil, err
			}
			out[i] = res
		}
		return out, nil
	}
	if r.meta.task != nil {
		for _, in := range inputs {
			if err := r.meta.mayAsk(in); err != nil {
				return nil, err
			}
		}
		return r.meta.task.ask(ctx, inputs) // tasks.go: input_required until tasks/update
	}
	answers, err := r.meta.gathered(ctx, r)
	if err != nil {
		return nil, err
	}
	var missing []Input
	for i, in := range inputs {
		if err := r.meta.mayAsk(in); err != nil {
			return nil, err
		}
		a, ok := answers[in.Key]
		if !ok {
			missing = append(missing, in)
			continue
		}
		if len(a) == 0 || a[0] != '{' {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: inputResponses."+in.Key+" must be an object",
				map[string]string{"key": in.Key})
		}
		out[i] = a
	}
	if len(missing) > 0 {
		return nil, &InputRequired{inputs: missing}
	}
	return out, nil
}

// mayAsk refuses an input the request may not ask of its client: a
// method that asks nothing a client gives (a bug of the handler's), or one
// needing a capability the client did not declare (-32021).
func (m *requestMeta) mayAsk(in Input) error {
	capability, ok := inputCapability[in.Method]
	if !ok {
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcp: %s is not something a request can ask of its client", in.Method)
	}
	if c, _ := jsonrpc.Lookup(m.capabilities, capability); len(c) == 0 || string(c) == "null" {
		return MissingCapability(capability, "the client did not declare the "+capability+" capability", nil)
	}
	return nil
}

// gathered is every answer the client has given this request: those of
// earlier rounds, from the verified requestState, and those of its
// inputResponses (which win).
func (m *requestMeta) gathered(ctx context.Context, r *Request) (map[string]json.RawMessage, error) {
	if m.answers != nil || m.answersErr != nil {
		return m.answers, m.answersErr
	}
	m.answers = map[string]json.RawMessage{}
	if raw, _ := jsonrpc.Lookup(r.Params, "requestState"); raw != nil {
		var sealed string
		st, err := m.server.openState(ctx, r, raw, &sealed)
		if err != nil {
			m.answersErr = err
			return nil, err
		}
		for k, v := range st.Answers {
			m.answers[k] = v
		}
	}
	if raw, _ := jsonrpc.Lookup(r.Params, "inputResponses"); raw != nil && string(raw) != "null" {
		if len(raw) == 0 || raw[0] != '{' {
			m.answersErr = jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: inputResponses must be an object", nil)
			return nil, m.answersErr
		}
		_ = jsonrpc.Members(raw, func(k string, v json.RawMessage) bool {
			m.answers[k] = v
			return true
		})
	}
	return m.answers, nil
}

// requestState is what a sealed requestState holds.
type requestState struct {
	Principal string                     `json:"p"`
	Method    string                     `json:"m"`
	Entry     string                     `json:"n"`
	Expires   int64                      `json:"e"` // unix seconds
	Answers   map[string]json.RawMessage `json:"a,omitempty"`
	// Upstream is the requestState of the server a gateway relayed the
	// request to, kept sealed here so that only this caller can resume it.
	Upstream string `json:"u,omitempty"`
}

// stateTTL bounds how long a client may take to answer.
const stateTTL = 10 * time.Minute

// inputRequiredResult answers r with the inputs ir asks for and the
// answers gathered so far, sealed.
func (s *Server) inputRequiredResult(ctx context.Context, r *Request, ir *InputRequired) (json.RawMessage, error) {
	st := requestState{Principal: principalOf(ctx), Method: r.Method, Entry: r.target.Name,
		Expires: time.Now().Add(stateTTL).Unix(), Answers: r.meta.answers}
	sealed, err := s.sealState(st)
	if err != nil {
		return nil, err
	}
	b := []byte(`{"resultType":"input_required","inputRequests":{`)
	for i, in := range ir.inputs {
		params, err := marshalParams(in.Params)
		if err != nil {
			return nil, err
		}
		if params == nil {
			params = emptyResult
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonrpc.AppendString(b, in.Key)
		b = append(b, `:{"method":`...)
		b = jsonrpc.AppendString(b, in.Method)
		b = append(b, `,"params":`...)
		b = append(b, params...)
		b = append(b, '}')
	}
	b = append(b, `},"requestState":`...)
	b = jsonrpc.AppendString(b, sealed)
	return append(b, '}'), nil
}

func principalOf(ctx context.Context) string {
	id, _ := IdentityFrom(ctx)
	return id.Key()
}

// stateAEAD is the server's sealer of request states, its key made once
// (Options.StateKey, or a random one).
func (s *Server) stateAEAD() (cipher.AEAD, error) {
	s.stateOnce.Do(func() {
		key := s.opts.StateKey
		if len(key) == 0 {
			key = make([]byte, 32)
			if _, err := rand.Read(key); err != nil {
				s.stateErr = err
				return
			}
		}
		if s.stateSealer, s.stateErr = newStateAEAD(key); s.stateErr == nil && len(s.opts.PreviousStateKey) > 0 {
			s.statePrev, s.stateErr = newStateAEAD(s.opts.PreviousStateKey)
		}
	})
	return s.stateSealer, s.stateErr
}

func newStateAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (s *Server) sealState(st requestState) (string, error) {
	aead, err := s.stateAEAD()
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, nil)), nil
}

// errBadState is the answer to a requestState that does not verify.
var errBadState = jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: requestState does not verify", nil)

// openState verifies a requestState (raw, a JSON string) for r.
func (s *Server) openState(ctx context.Context, r *Request, raw json.RawMessage, sealed *string) (requestState, error) {
	var st requestState
	if err := json.Unmarshal(raw, sealed); err != nil {
		return st, errBadState
	}
	aead, err := s.stateAEAD()
	if err != nil {
		return st, err
	}
	b, err := base64.RawURLEncoding.DecodeString(*sealed)
	if err != nil || len(b) < aead.NonceSize() {
		return st, errBadState
	}
	plain, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], nil)
	if err != nil && s.statePrev != nil {
		plain, err = s.statePrev.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], nil)
	}
	if err != nil || json.Unmarshal(plain, &st) != nil {
		return st, errBadState
	}
	switch {
	case st.Principal != principalOf(ctx), st.Method != r.Method, st.Entry != r.target.Name:
		return st, errBadState
	case time.Now().Unix() > st.Expires:
		return st, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: requestState has expired", nil)
	}
	return st, nil
}

// SealUpstreamState wraps, for r's caller, the requestState an upstream
// server answered a relayed request with. It is sealed like the engine's
// own: bound to the caller, the request's method and entry, and an expiry.
// Another caller, request or entry cannot resume it. Only a sessionless
// request has one.
func (r *Request) SealUpstreamState(ctx context.Context, upstream string) (string, error) {
	if r.meta == nil {
		return "", errors.New("mcp: only a sessionless request has a requestState")
	}
	return r.meta.server.sealState(requestState{Principal: principalOf(ctx), Method: r.Method, Entry: r.target.Name,
		Expires: time.Now().Add(stateTTL).Unix(), Upstream: upstream})
}

// OpenUpstreamState is the upstream requestState r's own requestState
// wraps (SealUpstreamState); ok is false when r has none. One that does
// not verify for r is -32602.
func (r *Request) OpenUpstreamState(ctx context.Context) (upstream string, ok bool, err error) {
	raw, _ := jsonrpc.Lookup(r.Params, "requestState")
	if raw == nil || r.meta == nil {
		return "", false, nil
	}
	var sealed string
	st, err := r.meta.server.openState(ctx, r, raw, &sealed)
	if err != nil {
		return "", true, err
	}
	if st.Upstream == "" {
		return "", true, errBadState
	}
	return st.Upstream, true, nil
}

// MissingCapability is the revision's -32021: the request needs a client
// capability the client did not declare. data.requiredCapabilities names
// it as a ClientCapabilities object; extra members go beside it.
func MissingCapability(capability, message string, extra map[string]string) *jsonrpc.Error {
	data := map[string]any{"requiredCapabilities": map[string]struct{}{capability: {}}}
	for k, v := range extra {
		data[k] = v
	}
	return jsonrpc.NewError(CodeMissingRequiredCapability, message, data)
}

// isInputRequired reports whether err asks for input.
func isInputRequired(err error) (*InputRequired, bool) {
	return errors.AsType[*InputRequired](err)
}
