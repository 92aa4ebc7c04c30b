// prompts.go is the prompts registry and prompts/get. Required arguments
// are checked after the gate: a caller who may not use a prompt learns
// nothing about its arguments.

package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A PromptHandler renders a prompt; it returns the raw prompts/get result.
type PromptHandler func(ctx context.Context, r *Request, args map[string]string) (json.RawMessage, error)

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompt is a prompts registry entry.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	Meta        json.RawMessage
	MinRole     string
	Owner       string // who serves it (Entry.Owner)
	Origin      string // the name its owner knows it by (Entry.Origin)
	Get         PromptHandler
	Definition  json.RawMessage // sent as is in prompts/list when set
	Short       string          // the compact view's description ("": the full one)
}

// AddPrompts registers prompts by name.
func (s *Server) AddPrompts(ps ...*Prompt) error {
	slots := make([]*slot[*Prompt], 0, len(ps))
	for _, p := range ps {
		if p.Name == "" || p.Get == nil {
			return fmt.Errorf("mcp: prompt %q needs a name and a handler", p.Name)
		}
		def := p.Definition
		if def == nil {
			def, _ = json.Marshal(struct {
				Name        string           `json:"name"`
				Title       string           `json:"title,omitempty"`
				Description string           `json:"description,omitempty"`
				Arguments   []PromptArgument `json:"arguments,omitempty"`
				Meta        json.RawMessage  `json:"_meta,omitempty"`
			}{p.Name, p.Title, p.Description, p.Arguments, p.Meta})
		}
		slots = append(slots, &slot[*Prompt]{value: p, def: def, derived: newDerived(def, p.Short), entry: Entry{Kind: KindPrompt, Name: p.Name, MinRole: p.MinRole, Owner: p.Owner, Origin: p.Origin}})
	}
	s.prompts.put(slots...)
	return nil
}

// RemovePrompts unregisters prompts by name.
func (s *Server) RemovePrompts(names ...string) { s.prompts.remove(names...) }

func (s *Server) servePromptsList(ctx context.Context, r *Request) (json.RawMessage, error) {
	return s.prompts.list(ctx, r.Params, "prompts")
}

// servePromptsGet gets the prompt the request resolved to (target.go),
// which the gate has admitted.
func (s *Server) servePromptsGet(ctx context.Context, r *Request) (json.RawMessage, error) {
	p, name := r.target.prompt, r.target.Name
	var args map[string]string
	if raw, _ := jsonrpc.Lookup(r.Params, "arguments"); raw != nil && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: prompt arguments must be an object of strings",
				map[string]string{"name": name})
		}
	}
	var missing []string
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing required prompt arguments",
			map[string]any{"name": name, "missing": missing})
	}
	return p.Get(ctx, r, args)
}
