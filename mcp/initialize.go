// initialize.go is the lifecycle handshake: negotiate a revision, remember
// the client, and declare only the capabilities this server really serves.

package mcp

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

type initializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
}

func (s *Server) serveInitialize(ctx context.Context, r *Request) (json.RawMessage, error) {
	if err := s.AdmitSession(ctx, "initialize"); err != nil {
		return nil, err
	}
	var p initializeParams
	if err := decodeParams(r.Params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: protocolVersion is required", nil)
	}
	ss := r.Session
	if ss == nil {
		// A stateless client: answered, and nothing is kept
		// (stateless.go); each later request names its revision.
		return initializeResult(ctx, s, NegotiateVersion(p.ProtocolVersion))
	}
	if ss.initialized.Load() && ss.id != "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: session already initialized")
	}
	v := NegotiateVersion(p.ProtocolVersion)
	ss.mu.Lock()
	ss.clientCaps = p.Capabilities
	ss.clientInfo = p.ClientInfo
	ss.mu.Unlock()
	ss.version.Store(&v)
	ss.initialized.Store(true)
	return initializeResult(ctx, s, v)
}

func initializeResult(ctx context.Context, s *Server, v string) (json.RawMessage, error) {
	res := struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      Implementation  `json:"serverInfo"`
		Instructions    string          `json:"instructions,omitempty"`
	}{v, s.caps, s.opts.Info, s.instructions(ctx)}
	return json.Marshal(res)
}

// capabilities declares what the server serves and nothing more: every
// registry sends list_changed when it changes, subscriptions are served,
// logging/setLevel is served, completion only when configured.
func (s *Server) capabilities() json.RawMessage {
	type listChanged struct {
		ListChanged bool `json:"listChanged"`
	}
	caps := struct {
		Logging     struct{}    `json:"logging"`
		Completions *struct{}   `json:"completions,omitempty"`
		Tools       listChanged `json:"tools"`
		Resources   struct {
			Subscribe   bool `json:"subscribe"`
			ListChanged bool `json:"listChanged"`
		} `json:"resources"`
		Prompts listChanged `json:"prompts"`
	}{}
	if s.opts.Complete != nil {
		caps.Completions = &struct{}{}
	}
	caps.Tools.ListChanged = true
	caps.Resources.Subscribe = true
	caps.Resources.ListChanged = true
	caps.Prompts.ListChanged = true
	b, _ := json.Marshal(caps)
	return b
}

// instructions are what initialize and server/discover answer the caller
// in ctx with.
func (s *Server) instructions(ctx context.Context) string {
	if s.opts.InstructionsFrom != nil {
		return s.opts.InstructionsFrom(s.ownersShown(ctx))
	}
	return s.opts.Instructions
}

// ownersShown reports, for the caller in ctx, whether an owner serves an
// entry the gate shows them. The catalogue is walked once, at the first
// question, and only until each owner has a shown entry.
func (s *Server) ownersShown(ctx context.Context) func(owner string) bool {
	var shown map[string]bool
	return func(owner string) bool {
		if shown == nil {
			shown = map[string]bool{}
			see := func(e Entry, _ json.RawMessage) {
				if !shown[e.Owner] && s.gate.Visible(ctx, e) {
					shown[e.Owner] = true
				}
			}
			eachEntry(s.tools, see)
			eachEntry(s.resources, see)
			eachEntry(s.templates, see)
			eachEntry(s.prompts, see)
		}
		return shown[owner]
	}
}
