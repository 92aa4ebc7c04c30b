// register.go turns prepared entries into the front server's registry
// entries, each with a handler that forwards to this backend.

package catalogue

import (
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func (b *Mirror) addTools(s *mcp.Server, es []entry) {
	if len(es) == 0 {
		return
	}
	tools := make([]*mcp.Tool, 0, len(es))
	kept := es[:0:0]
	for _, e := range es {
		// A tool whose x-mcp-header annotations break the rules is left
		// out, as a client of 2026-07-28 must (SEP-2243), and alone: the
		// server would refuse the whole batch for it.
		schema, _ := jsonrpc.Lookup(e.def, "inputSchema")
		if _, err := mcp.HeaderParams(schema); err != nil {
			b.drop(kindTool, e, err)
			continue
		}
		t := &mcp.Tool{
			Name: e.key, Definition: e.def, MinRole: b.minRole("tool", e.orig), Owner: b.name, Origin: e.orig, Short: b.short("tool", e),
			SkipValidation: true, // the backend judges its own arguments
			Handler:        b.callTool(e.orig, e.shape, e.own),
		}
		if b.validate {
			b.validateAgainstListed(t, e)
		}
		tools, kept = append(tools, t), append(kept, e)
	}
	if err := s.AddTools(tools...); err != nil {
		for _, e := range kept {
			b.drop(kindTool, e, err)
		}
	}
}

func (b *Mirror) addResources(s *mcp.Server, es []entry) {
	if len(es) == 0 {
		return
	}
	rs := make([]*mcp.Resource, len(es))
	for i, e := range es {
		rs[i] = &mcp.Resource{URI: e.key, Definition: e.def, MinRole: b.minRole("resource", e.orig), Owner: b.name, Read: b.readResource,
			Short: b.short("resource", e)}
	}
	if err := s.AddResources(rs...); err != nil {
		for _, e := range es {
			b.drop(kindResource, e, err)
		}
	}
}

// addTemplates registers templates one by one: the server refuses a whole
// batch for one template it cannot parse, and one bad template must not
// hide the others.
func (b *Mirror) addTemplates(s *mcp.Server, es []entry) {
	for _, e := range es {
		t := &mcp.ResourceTemplate{URITemplate: e.key, Definition: e.def, MinRole: b.minRole("resource", e.orig), Owner: b.name, Read: b.readResource,
			Short: b.short("resource", e)}
		if err := s.AddResourceTemplates(t); err != nil {
			b.drop(kindTemplate, e, err)
		}
	}
}

func (b *Mirror) addPrompts(s *mcp.Server, es []entry) {
	if len(es) == 0 {
		return
	}
	ps := make([]*mcp.Prompt, len(es))
	for i, e := range es {
		ps[i] = &mcp.Prompt{Name: e.key, Definition: e.def, MinRole: b.minRole("prompt", e.orig), Owner: b.name, Origin: e.orig, Get: b.getPrompt(e.orig, e.shape),
			Short: b.short("prompt", e)}
	}
	if err := s.AddPrompts(ps...); err != nil {
		for _, e := range es {
			b.drop(kindPrompt, e, err)
		}
	}
}

// validateAgainstListed makes the engine check t's arguments against the
// input schema the backend listed, so that a call that breaks it is
// answered -32602 with the violations before the backend is asked (some
// backends answer such calls with a result). A schema the validator
// cannot compile leaves the tool unchecked, and says so in the log.
func (b *Mirror) validateAgainstListed(t *mcp.Tool, e entry) {
	schema, err := jsonrpc.Lookup(e.def, "inputSchema")
	if err != nil || len(schema) == 0 {
		return
	}
	if err := mcp.CheckSchema(schema); err != nil {
		b.log.Warn("validate_arguments: the tool's input schema does not compile; its arguments are left to the backend",
			"tool", e.orig, "err", err)
		return
	}
	t.InputSchema, t.SkipValidation = schema, false
}

// short is e's compact-view description ("": its full one), as ShortFor
// says; a configured one that is not shorter than the entry's own is
// not used, and logged.
func (b *Mirror) short(kind string, e entry) string {
	if b.shortFor == nil {
		return ""
	}
	full, _ := jsonrpc.LookupString(e.def, "description")
	title, _ := jsonrpc.LookupString(e.def, "title")
	if title == "" {
		if ann, err := jsonrpc.Lookup(e.def, "annotations"); err == nil && ann != nil {
			title, _ = jsonrpc.LookupString(ann, "title")
		}
	}
	short, refused := b.shortFor(kind, e.orig, full, title)
	if refused {
		b.log.Warn("short description not used: it is not shorter than the entry's own", "kind", kind, "name", e.orig)
	}
	return short
}
