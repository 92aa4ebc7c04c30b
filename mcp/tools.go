// tools.go is the tools registry and the tools/call contract (seed 004). An
// unknown tool, or arguments that break the input schema, are the caller's
// fault, answered with -32602. A tool that runs and fails returns a normal
// result with isError. The model then reads the failure, instead of the
// client treating the call as broken.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A ToolHandler runs one tools/call with the raw arguments object and
// returns the raw result. A *jsonrpc.Error is answered as a JSON-RPC error
// (a relay passes its backend's errors through this way); any other error
// means the tool ran and failed, and is answered as an isError result
// carrying the classified failure (see ToolError).
type ToolHandler func(ctx context.Context, r *Request, args json.RawMessage) (json.RawMessage, error)

// Tool is a tools registry entry.
type Tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage // default {"type":"object"}
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	Meta         json.RawMessage
	// MinRole is the lowest role that may see and call the tool ("" for
	// any authenticated caller).
	MinRole string
	// Owner names who serves the tool (Entry.Owner): a gateway's
	// backend.
	Owner string
	// Origin is the name the owner knows the tool by (Entry.Origin).
	Origin  string
	Handler ToolHandler
	// Definition, when set, is sent in tools/list as it is (a relayed
	// backend's entry, byte for byte); the descriptive fields are ignored.
	Definition json.RawMessage
	// Short is the description the compact view gives ("": the full one).
	Short string
	// Search marks a tool of the search mode: listed in the search view
	// only (compact.go), callable in every one.
	Search bool
	// Delegates marks a tool whose handler only calls another tool
	// (Request.CallTool): the gate admits it on sight, without spending
	// the caller's rate, since the call it makes is admitted in full.
	Delegates bool
	// SkipValidation leaves argument checking to the handler (a relay lets
	// its backend judge).
	SkipValidation bool
	// TaskSupport says the tool may run as a task (TaskOptional,
	// TaskRequired; "" for never): its handler returns RunAsTask for the
	// part that does (tasks.go).
	TaskSupport string

	schema  *inputSchema
	headers []HeaderParam // its x-mcp-header arguments (headerparams.go)
}

// AddTools registers tools, replacing any of the same name in place. An
// input schema that does not compile, or whose x-mcp-header annotations
// break the rules (HeaderParams), is an error and nothing is added.
func (s *Server) AddTools(tools ...*Tool) error {
	slots := make([]*slot[*Tool], 0, len(tools))
	for _, t := range tools {
		if t.Name == "" || t.Handler == nil {
			return fmt.Errorf("mcp: tool %q needs a name and a handler", t.Name)
		}
		listed := t.InputSchema
		if len(listed) == 0 && t.Definition != nil {
			listed, _ = jsonrpc.Lookup(t.Definition, "inputSchema")
		}
		hp, err := HeaderParams(listed)
		if err != nil {
			return fmt.Errorf("mcp: tool %q: %w", t.Name, err)
		}
		t.headers = hp
		if len(t.InputSchema) == 0 {
			t.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if !t.SkipValidation {
			sch, err := compileSchema(t.InputSchema)
			if err != nil {
				return fmt.Errorf("mcp: tool %q: input schema: %w", t.Name, err)
			}
			t.schema = sch
		}
		def := t.Definition
		if def == nil {
			var err error
			if def, err = t.definition(); err != nil {
				return fmt.Errorf("mcp: tool %q: %w", t.Name, err)
			}
		}
		views := uint8(notSearch)
		switch {
		case t.Search:
			views = searchOnly
		case s.opts.Pinned != nil && s.opts.Pinned(t.Name):
			views = everyView
		}
		slots = append(slots, &slot[*Tool]{value: t, def: def, derived: newDerived(def, t.Short), views: views,
			entry: Entry{Kind: KindTool, Name: t.Name, MinRole: t.MinRole, Owner: t.Owner, Origin: t.Origin}})
	}
	s.tools.put(slots...)
	return nil
}

// RemoveTools unregisters tools by name.
func (s *Server) RemoveTools(names ...string) { s.tools.remove(names...) }

func (t *Tool) definition() (json.RawMessage, error) {
	return json.Marshal(struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description,omitempty"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  json.RawMessage `json:"annotations,omitempty"`
		Execution    *toolExecution  `json:"execution,omitempty"`
		Meta         json.RawMessage `json:"_meta,omitempty"`
	}{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations, t.execution(), t.Meta})
}

func (s *Server) serveToolsList(ctx context.Context, r *Request) (json.RawMessage, error) {
	return s.tools.list(ctx, r.Params, "tools")
}

// serveToolsCall runs the tool the request resolved to (target.go), which
// the gate has admitted.
func (s *Server) serveToolsCall(ctx context.Context, r *Request) (json.RawMessage, error) {
	t, name := r.target.tool, r.target.Name
	args, _ := jsonrpc.Lookup(r.Params, "arguments")
	if string(args) == "null" {
		args = nil
	}
	if args != nil && args[0] != '{' {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: arguments must be an object",
			map[string]string{"name": name})
	}
	if r.meta != nil && r.meta.paramHeaders != nil && len(t.headers) > 0 {
		if msg := checkHeaderParams(t.headers, args, r.meta.paramHeaders); msg != "" {
			return nil, jsonrpc.NewError(CodeHeaderMismatch, msg, map[string]string{"name": name})
		}
	}
	if t.schema != nil {
		if vs := t.schema.violations(args); len(vs) > 0 {
			return s.invalidArguments(name, vs)
		}
	}
	if t.TaskSupport == TaskRequired && !clientTakesTasks(r) {
		return nil, errTasksNotDeclared("tool " + name)
	}
	res, err := t.Handler(ctx, r, args)
	if rt, ok := errors.AsType[*runAsTask](err); ok {
		if t.TaskSupport != "" && clientTakesTasks(r) {
			return s.startTask(ctx, r, rt.rest)
		}
		res, err = rt.rest(ctx, r) // no task for this client: the rest is the call
	}
	if err == nil {
		return res, nil
	}
	if _, ok := isInputRequired(err); ok {
		return nil, err // the engine asks the client (mrtr.go)
	}
	if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return nil, je
	}
	s.log.Info("tool failed", "tool", name, "err", err)
	return ToolErrorResult(err), nil
}

// invalidArguments answers schema violations in the configured style.
func (s *Server) invalidArguments(name string, vs []Violation) (json.RawMessage, error) {
	if s.opts.ValidationErrorsAsResults {
		text, _ := json.Marshal(struct {
			Error      string      `json:"error"`
			Violations []Violation `json:"violations"`
		}{"invalid arguments for tool " + name, vs})
		return Result(CallToolResult{Content: []Content{TextContent(string(text))}, IsError: true})
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid arguments for tool "+name,
		struct {
			Tool       string      `json:"tool"`
			Violations []Violation `json:"violations"`
		}{name, vs})
}
