// framed.go serves the framed connection's exchanges: the tools begin, and
// the channels the client opens on it — Info, the MCP exchanges, Secrets,
// the gateway's half of a Postgres pair (pairs.go) or a Daemon pair
// (daemon.go). The begun scope is also where the proxy opens its own
// channels to ask the gateway what the MCP server asks of its client
// (ask.go).
//
// The container begins once; a connection begins each time (docs/wire.md
// 3.2). The first begin of the proxy's life registers the program. The
// first begin of a later connection re-attaches. It is answered with the
// same Begun, without /register, when its arguments are equal as JSON to
// the first's, and refused ("kind":"begun") when they are not.

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/mcpgate/mcpgate/wire"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// beginState is the connection's one tools begin.
type beginState struct {
	mu      sync.Mutex
	scope   uint32
	pending bool          // a begin is being decided
	begun   chan struct{} // closed at Begun
	done    bool
}

func (b *beginState) init() { b.begun = make(chan struct{}) }

// claim reserves the begin for scope, unless one is begun or under way.
func (b *beginState) claim(scope uint32) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || b.pending {
		return false
	}
	b.pending, b.scope = true, scope
	return true
}

// settle ends the begin in progress: Begun, or refused (a later begin may
// try again).
func (b *beginState) settle(begun bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = false
	if begun {
		b.done = true
		close(b.begun)
	}
}

// isBegun reports whether the connection has begun.
func (b *beginState) isBegun() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done
}

// await waits until scope is the begun tools scope.
func (b *beginState) await(ctx context.Context, scope uint32) bool {
	for {
		b.mu.Lock()
		done, begunScope, begun := b.done, b.scope, b.begun
		b.mu.Unlock()
		if done {
			return begunScope == scope
		}
		select {
		case <-begun:
		case <-ctx.Done():
			return false
		}
	}
}

type framedHandler struct {
	s     *Server
	begin *beginState // this connection's
}

// container is the container's one begin: what it registered with.
type container struct {
	mu        sync.Mutex
	begun     bool
	arguments json.RawMessage // canonical (jsonCanonical)
	answer    json.RawMessage
}

// wireError is this wire's error value: an object with a "kind".
func wireError(kind, msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"kind": kind, "error": msg})
	return b
}

func (h framedHandler) ServeScope(ctx context.Context, r *wire.Responder, payload []byte) {
	req, err := wire.DecodeScopeRequest(payload)
	if err != nil {
		h.s.log.Debug("proxy: unreadable scope request; bare finish", "err", err)
		return
	}
	begin, ok := req.(wire.BeginTools)
	if !ok {
		h.s.log.Info("proxy: begin not served here; bare finish", "tag", payload[0])
		return
	}
	if !h.begin.claim(r.Scope()) {
		_ = r.Respond(wire.BeginAnswer{Error: wireError("already_begun", "this connection has already begun")}.Append(nil))
		return
	}
	answer, again, refusal := h.s.beginContainer(ctx, begin)
	if refusal != nil {
		h.begin.settle(false)
		_ = r.Respond(wire.BeginAnswer{Error: refusal}.Append(nil))
		return
	}
	if err := h.s.answerBegin(ctx, r, wire.BeginAnswer{Answer: answer}.Append(nil)); err != nil {
		h.begin.settle(false)
		return
	}
	h.begin.settle(true)
	if again {
		h.s.log.Info("proxy: re-attached", "image", imageName(begin))
	} else {
		h.s.log.Info("proxy: begun", "image", imageName(begin))
	}
	<-ctx.Done() // the begun scope stays open and silent until the connection ends
}

// beginContainer begins the container, once in the proxy's life; again
// reports a re-attach, answered with the Begun of the first time when the
// arguments are equal as JSON, refused otherwise.
func (s *Server) beginContainer(ctx context.Context, begin wire.BeginTools) (answer json.RawMessage, again bool, refusal json.RawMessage) {
	args := jsonCanonical(begin.Arguments)
	c := &s.container
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.begun {
		if !bytes.Equal(args, c.arguments) {
			return nil, true, wireError("begun", "the container has begun with other arguments; a later connection must begin with the same")
		}
		return c.answer, true, nil
	}
	answer, refusal = s.register(ctx, begin)
	if refusal == nil {
		c.begun, c.arguments, c.answer = true, args, answer
	}
	return answer, false, refusal
}

// jsonCanonical is a JSON value in one form of its own: objects' members
// sorted, no space, numbers as written (so 1 and 1.0 differ); absent is
// null.
func jsonCanonical(v json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(v)) == 0 {
		return json.RawMessage("null")
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if d.Decode(&x) != nil {
		return v
	}
	out, err := json.Marshal(x)
	if err != nil {
		return v
	}
	return out
}

// register asks a contract program to accept the begin's arguments; a
// plain MCP server begins at once.
func (s *Server) register(ctx context.Context, begin wire.BeginTools) (answer, refusal json.RawMessage) {
	c := s.up.Contract()
	if c == nil {
		return nil, nil
	}
	args := begin.Arguments
	if args == nil {
		args = json.RawMessage("null")
	}
	answer, refusal, err := c.Register(ctx, args)
	if err != nil {
		return nil, wireError("program_unreachable", err.Error())
	}
	return answer, refusal
}

func imageName(b wire.BeginTools) string {
	if b.Image == nil {
		return ""
	}
	return b.Image.Name
}

func (h framedHandler) ServeChannel(ctx context.Context, r *wire.Responder, payload []byte) {
	req, err := wire.DecodeChannelRequest(payload)
	if err != nil {
		h.s.log.Info("proxy: channel request does not decode; bare finish", "err", err)
		return
	}
	if !h.begin.isBegun() {
		h.s.log.Debug("proxy: channel waits for Begun", "scope", r.Scope(), "channel", r.Channel())
	}
	if !h.begin.await(ctx, r.Scope()) {
		h.s.log.Debug("proxy: channel on a scope that is not the begun tools scope; bare finish")
		return
	}
	if method, params, ok := wiremcp.Method(req); ok {
		_ = r.Respond(h.s.exchange(ctx, formFramed, method, params).Append(nil))
		return
	}
	switch req := req.(type) {
	case wire.Info:
		_ = r.Respond(h.s.info().Append(nil))
	case wire.McpNotifications:
		_ = h.s.streamNotifications(ctx, formFramed, func(resp wire.Response) error { return r.Respond(resp.Append(nil)) })
	case wire.Secrets:
		_ = r.Respond(h.s.feed(ctx, req).Append(nil))
	case wire.Postgres:
		h.s.servePostgresChannel(ctx, r, req.ConnID)
	case wire.Daemon:
		h.s.serveDaemonChannel(ctx, r, req.ConnID)
	}
}

// info answers Info from the image's DIVERGE.md; the program is never
// asked.
func (s *Server) info() wire.InfoAnswer {
	doc, found, err := ReadInfo(s.infoPath)
	switch {
	case err != nil:
		return wire.InfoAnswer{Error: wireError("info", err.Error())}
	case !found:
		return wire.InfoAnswer{}
	default:
		return wire.InfoAnswer{Document: doc}
	}
}

// feed hands the secrets to the program and opens the gate when it takes
// them. A URL upstream has no program to feed: the values are dropped and
// the gate opens, as the wire's caller asked for an activation.
func (s *Server) feed(ctx context.Context, req wire.Secrets) wire.SecretsAnswer {
	refusal, err := s.up.FeedSecrets(ctx, req.Values)
	switch {
	case errors.Is(err, ErrNoProgram):
		s.log.Info("proxy: secrets fed to an upstream with no program to take them; values dropped", "secrets", len(req.Values))
	case err != nil:
		return wire.SecretsAnswer{Error: wireError("secrets", err.Error())}
	case refusal != nil:
		return wire.SecretsAnswer{Error: refusal}
	}
	s.gate.Open()
	s.log.Info("proxy: secrets fed", "secrets", len(req.Values))
	return wire.SecretsAnswer{}
}
