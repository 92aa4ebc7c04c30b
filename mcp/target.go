// target.go resolves, once and before any middleware runs, the catalogue
// entry a gated request names — as net/http's ServeMux sets r.Pattern
// before the handler runs. The gate, the observers, the relay and the
// method handler all read the one resolution: which tool, resource or
// prompt, the name the caller asked for, the entry's owner, and, when
// none matched, the error to answer.

package mcp

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Target is the entry a gated request names, as the engine resolved it.
type Target struct {
	Kind EntryKind
	// Name is what the caller asked for: params.name, or params.uri for a
	// resource ("" when absent or not a string).
	Name string
	// Found reports that Entry is the catalogue entry serving the
	// request; its Name is the catalogue's (a template's pattern for a URI
	// the template matched). When not found, Entry may still be an entry
	// the server remembers (Options.Unknown: a backend that is down), so
	// that its Owner is known.
	Found bool
	Entry Entry
	// Call reports a gated call — tools/call, resources/read,
	// prompts/get — which the audit log records; resources/subscribe
	// resolves an entry and asks the gate too, but is no call.
	Call bool

	err    error // the answer when !Found: invalid params, unknown entry
	tool   *Tool
	read   ResourceHandler
	vars   map[string]string
	prompt *Prompt
}

// targets are the methods that name an entry, and where.
var targets = map[string]struct {
	kind   EntryKind
	member string
	call   bool
}{
	"tools/call":          {KindTool, "name", true},
	"prompts/get":         {KindPrompt, "name", true},
	"resources/read":      {KindResource, "uri", true},
	"resources/subscribe": {KindResource, "uri", false},
}

// Target is the entry r names, resolved before its chain ran; nil for a
// method that names none.
func (r *Request) Target() *Target {
	if !r.targeted {
		return nil
	}
	return &r.target
}

// EntryName returns the name or URI a gated request asked for; ok is false
// when that member is absent or not a string, or the method names no
// entry.
func (r *Request) EntryName() (string, bool) {
	if !r.targeted || r.target.Name == "" {
		return "", false
	}
	return r.target.Name, true
}

// resolve prepares r before its chain runs: params whose keys a decoder
// could read differently are refused (paramkeys.go), and the entry a gated
// method names is looked up.
func (s *Server) resolve(ctx context.Context, r *Request) {
	if err := checkParamKeys(r.Method, r.Params); err != nil {
		r.refused = err
	}
	spec, ok := targets[r.Method]
	if !ok {
		return
	}
	r.target, r.targeted = Target{Kind: spec.kind, Call: spec.call}, true
	t := &r.target // in the request's own allocation: no other per call
	if len(r.Params) == 0 || r.Params[0] != '{' {
		msg := "invalid params: " + r.Method + " needs an object with name"
		if spec.member == "uri" {
			msg = "invalid params: uri is required"
		}
		t.err = jsonrpc.NewError(jsonrpc.CodeInvalidParams, msg, nil)
		return
	}
	text, ok := jsonrpc.LookupText(r.Params, spec.member)
	if ok && r.refused == nil && len(text) > 0 {
		// A tool or prompt found is named by its key: no string per call.
		switch spec.kind {
		case KindTool:
			t.tool, t.Entry, t.Name, t.Found = s.tools.find(text)
		case KindPrompt:
			t.prompt, t.Entry, t.Name, t.Found = s.prompts.find(text)
		}
		if t.Found {
			return
		}
	}
	name := string(text)
	t.Name = name // recorded as asked, refused or not
	if r.refused != nil {
		t.err = r.refused // nothing is looked up by a name whose key is ambiguous
		return
	}
	if !ok || name == "" {
		t.err = jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+spec.member+" is required and must be a string", nil)
		return
	}
	switch spec.kind {
	case KindTool:
		t.tool, t.Entry, t.Found = s.tools.get(name)
		if !t.Found {
			t.err = s.unknownEntry(ctx, t, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool: "+name, map[string]string{"name": name}))
		}
	case KindPrompt:
		t.prompt, t.Entry, t.Found = s.prompts.get(name)
		if !t.Found {
			t.err = s.unknownEntry(ctx, t, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt: "+name, map[string]string{"name": name}))
		}
	case KindResource:
		t.read, t.vars, t.Entry, t.Found = s.findResource(name)
		if !t.Found {
			t.err = s.unknownEntry(ctx, t, resourceNotFound(name))
		}
	}
}

// unknownEntry is the answer to a call naming no entry: notFound, unless
// Options.Unknown still knows the entry and the caller may see it (then
// t.Entry is that entry).
func (s *Server) unknownEntry(ctx context.Context, t *Target, notFound error) error {
	if s.opts.Unknown == nil {
		return notFound
	}
	e, err := s.opts.Unknown(t.Kind, t.Name)
	if err == nil || !s.gate.Visible(ctx, e) {
		return notFound
	}
	t.Entry = e
	return err
}

// gateMiddleware asks the gate to admit the entry a request resolved to,
// before anything else of its is read. The engine places it innermost,
// after every middleware added with Use: no middleware can serve a call
// the gate has not admitted.
func gateMiddleware(g Gate) Middleware {
	rg, _ := g.(RequestGate)
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, r *Request) (json.RawMessage, error) {
			if t := r.Target(); t != nil && t.Found && r.refused == nil {
				// A tool that only delegates (Tool.Delegates) spends
				// nothing of its own: the call it makes is admitted.
				delegates := t.tool != nil && t.tool.Delegates && g.Visible(ctx, t.Entry)
				var err error
				switch {
				case delegates:
				case rg != nil:
					err = rg.AdmitRequest(ctx, t.Entry, r)
				default:
					err = g.Admit(ctx, t.Entry)
				}
				if err != nil {
					return nil, err
				}
			}
			return next.ServeMCP(ctx, r)
		})
	}
}
