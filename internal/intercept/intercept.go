// Package intercept runs interceptors: hooks called at fixed points of a
// gated call the gate admitted. A hook sees the request before the
// backend does, the answer after it, or both. It allows, denies, or (in
// mutate mode) gives the arguments or the result to use instead. A hook
// is an operator's HTTP endpoint (a webhook) or built in (the redactor,
// redact.go). Hooks run in the configured order, and a denial ends the
// chain. A hook that times out, cannot be reached or answers nonsense is
// taken as allowing (fail: open) or denying (fail: closed).
package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/internal/textcut"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// HookSpec is one interceptor as configured.
type HookSpec struct {
	Name string
	// URL is the webhook's, or the MCP server's (Tool); "" for a
	// built-in one (Builtin).
	URL string
	// Tool, when set, makes the hook an MCP server's tool, called with the
	// document as its arguments; it answers in its structured content (or
	// its text, as JSON).
	Tool string
	// Builtin names one that ships in the binary: "redact".
	Builtin string
	// Request and Response say where it is called: before the backend,
	// after it.
	Request, Response bool
	// Match chooses the calls (CEL, as the policy's rules; "": every
	// gated call).
	Match string
	// Mutate lets it give the arguments or the result to use instead;
	// otherwise it only allows or denies.
	Mutate bool
	// Timeout bounds one call of it (default DefaultTimeout).
	Timeout time.Duration
	// FailOpen: a hook that fails allows the call; otherwise it denies.
	FailOpen bool
	// Patterns are the redactor's own, beside its built-in ones.
	Patterns []Pattern
}

// DefaultTimeout bounds a hook's answer when its spec names no timeout.
const DefaultTimeout = time.Second

// maxAnswer bounds a hook's answer.
const maxAnswer = 8 << 20

// Outcomes a hook's call is counted by.
const (
	Allowed     = "allow"
	Denied      = "deny"
	Mutated     = "mutate"
	FailedOpen  = "error_open"
	FailedShut  = "error_closed"
	RedactedOut = "redact"
)

// Chain is the configured interceptors, in order.
type Chain struct {
	hooks  []*hook
	client *http.Client
	log    *slog.Logger
	// count hears of each hook's outcome (metrics); redacted of each
	// pattern's replacements.
	count    func(interceptor, outcome string)
	redacted func(pattern string, n int)
	callTool CallTool
}

// CallTool calls tool of the MCP server at url with args and returns the
// result of its tools/call.
type CallTool func(ctx context.Context, url, tool string, args json.RawMessage) (json.RawMessage, error)

type hook struct {
	spec  HookSpec
	match *policy.Condition
	red   *redactor
}

// Options are a Chain's surroundings.
type Options struct {
	// Client calls the webhooks (default: one of its own). Their URLs are
	// the operator's configuration, not a third party's word: the
	// outbound policy for such fetches does not apply.
	Client   *http.Client
	Logger   *slog.Logger
	Count    func(interceptor, outcome string)
	Redacted func(pattern string, n int)
	// CallTool reaches the interceptors that are an MCP server's tool.
	CallTool CallTool
}

// New compiles specs; an error names the interceptor.
func New(specs []HookSpec, o Options) (*Chain, error) {
	c := &Chain{client: o.Client, log: o.Logger, count: o.Count, redacted: o.Redacted, callTool: o.CallTool}
	if c.client == nil {
		c.client = &http.Client{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	for i, s := range specs {
		h := &hook{spec: s}
		if s.Timeout <= 0 {
			h.spec.Timeout = DefaultTimeout
		}
		if s.Match != "" {
			m, err := policy.CompileCondition(s.Match)
			if err != nil {
				return nil, fmt.Errorf("interceptors[%d] (%s).match: %w", i, s.Name, err)
			}
			h.match = m
		}
		if s.Tool != "" && c.callTool == nil {
			return nil, fmt.Errorf("interceptors[%d] (%s): nothing here calls an MCP server's tool", i, s.Name)
		}
		if s.Builtin == BuiltinRedact {
			r, err := newRedactor(s.Patterns)
			if err != nil {
				return nil, fmt.Errorf("interceptors[%d] (%s).patterns: %w", i, s.Name, err)
			}
			h.red, h.spec.Response, h.spec.Request = r, true, false
		}
		c.hooks = append(c.hooks, h)
	}
	return c, nil
}

// Specs are the interceptors, in order, as configured.
func (c *Chain) Specs() []HookSpec {
	if c == nil {
		return nil
	}
	out := make([]HookSpec, len(c.hooks))
	for i, h := range c.hooks {
		out[i] = h.spec
	}
	return out
}

// Len is the number of interceptors.
func (c *Chain) Len() int {
	if c == nil {
		return 0
	}
	return len(c.hooks)
}

// Middleware runs the chain around every gated call (it belongs inside
// the gate: mcp.Server.UseAdmitted).
func (c *Chain) Middleware(next mcp.Handler) mcp.Handler {
	return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
		t := r.Target()
		if c.Len() == 0 || t == nil || !t.Call || !t.Found {
			return next.ServeMCP(ctx, r)
		}
		id, _ := mcp.IdentityFrom(ctx)
		var hooks []*hook
		for _, h := range c.hooks {
			ok, err := h.match.Holds(id, t.Entry, r)
			if err != nil {
				c.log.Warn("interceptor: its match failed, and so it runs", "interceptor", h.spec.Name, "err", err)
			}
			if ok || err != nil {
				hooks = append(hooks, h)
			}
		}
		for _, h := range hooks {
			if h.spec.Request {
				if err := c.onRequest(ctx, h, id, r); err != nil {
					return nil, err
				}
			}
		}
		res, err := next.ServeMCP(ctx, r)
		for _, h := range hooks {
			if !h.spec.Response {
				continue
			}
			if res, err = c.onResponse(ctx, h, id, r, res, err); err != nil {
				var je *jsonrpc.Error
				if errors.As(err, &je) && je.Code == jsonrpc.CodeForbidden && r.DeniedBy() != "" {
					return nil, err // denied: the chain ends
				}
			}
		}
		return res, err
	})
}

// document is what a webhook is sent.
type document struct {
	Interceptor string          `json:"interceptor"`
	Phase       string          `json:"phase"` // request or response
	Method      string          `json:"method"`
	Entry       string          `json:"entry"`
	Origin      string          `json:"origin,omitempty"`
	Backend     string          `json:"backend,omitempty"`
	Principal   principal       `json:"principal"`
	Params      json.RawMessage `json:"params"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       *jsonrpc.Error  `json:"error,omitempty"`
}

type principal struct {
	Subject string `json:"subject"`
	Role    string `json:"role"`
	Token   string `json:"token,omitempty"`
}

// answer is what a webhook answers.
type answer struct {
	Decision  string          `json:"decision"` // allow or deny
	Message   string          `json:"message"`
	Arguments json.RawMessage `json:"arguments"` // mutate, request side
	Result    json.RawMessage `json:"result"`    // mutate, response side
}

func (c *Chain) onRequest(ctx context.Context, h *hook, id mcp.Identity, r *mcp.Request) error {
	if h.red != nil {
		return nil
	}
	if key, other, twins := jsonrpc.FoldTwins(r.Params); twins {
		return c.readApart(h, r, "params", key, other)
	}
	a, err := c.ask(ctx, h, c.doc(h, "request", id, r))
	if err != nil {
		return c.failed(h, r, err)
	}
	switch {
	case a.Decision == "deny":
		return c.deny(h, r, a.Message)
	case h.spec.Mutate && len(a.Arguments) > 0:
		if err := r.ReplaceArguments(a.Arguments); err != nil {
			return c.failed(h, r, fmt.Errorf("its arguments: %w", err))
		}
		c.counted(h, Mutated)
		r.AddHook(h.spec.Name, Mutated)
		return nil
	}
	c.counted(h, Allowed)
	return nil
}

func (c *Chain) onResponse(ctx context.Context, h *hook, id mcp.Identity, r *mcp.Request, res json.RawMessage, callErr error) (json.RawMessage, error) {
	if h.red != nil {
		if callErr != nil {
			return res, callErr
		}
		return c.redact(h, r, res), nil
	}
	if callErr == nil {
		if key, other, twins := jsonrpc.FoldTwins(res); twins {
			return nil, c.readApart(h, r, "answer", key, other)
		}
	}
	d := c.doc(h, "response", id, r)
	d.Result = res
	if callErr != nil {
		var je *jsonrpc.Error
		if !errors.As(callErr, &je) {
			je = jsonrpc.NewError(jsonrpc.CodeInternalError, callErr.Error(), nil)
		}
		d.Error = je
	}
	// A hook that fails open leaves the answer as it was.
	keep := func(err error) (json.RawMessage, error) {
		if ferr := c.failed(h, r, err); ferr != nil {
			return nil, ferr
		}
		return res, callErr
	}
	a, err := c.ask(ctx, h, d)
	if err != nil {
		return keep(err)
	}
	switch {
	case a.Decision == "deny":
		return nil, c.deny(h, r, a.Message)
	case h.spec.Mutate && len(a.Result) > 0 && callErr == nil:
		if err := sameShape(r.Method, a.Result); err != nil {
			return keep(fmt.Errorf("its result: %w", err))
		}
		c.counted(h, Mutated)
		r.AddHook(h.spec.Name, Mutated)
		return a.Result, nil
	}
	c.counted(h, Allowed)
	return res, callErr
}

func (c *Chain) doc(h *hook, phase string, id mcp.Identity, r *mcp.Request) document {
	t := r.Target()
	d := document{Interceptor: h.spec.Name, Phase: phase, Method: r.Method, Params: r.Params,
		Principal: principal{Subject: id.Subject, Role: id.Role, Token: id.TokenID}}
	if t != nil {
		d.Entry, d.Backend = t.Entry.Name, t.Entry.Owner
		if t.Entry.Origin != t.Entry.Name {
			d.Origin = t.Entry.Origin
		}
	}
	return d
}

// ask posts d to the hook and reads its answer, within its timeout.
func (c *Chain) ask(ctx context.Context, h *hook, d document) (answer, error) {
	body, err := json.Marshal(d)
	if err != nil {
		return answer{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, h.spec.Timeout)
	defer cancel()
	if h.spec.Tool != "" {
		return c.askTool(ctx, h, body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.spec.URL, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return answer{}, fmt.Errorf("no answer within %s", h.spec.Timeout)
		}
		return answer{}, errors.New("it could not be reached")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	switch {
	case err != nil:
		return answer{}, fmt.Errorf("its answer was cut off: %w", err)
	case len(raw) > maxAnswer:
		return answer{}, fmt.Errorf("its answer is over %d bytes", maxAnswer)
	case resp.StatusCode != http.StatusOK:
		return answer{}, fmt.Errorf("it answered HTTP %d", resp.StatusCode)
	}
	return decodeAnswer(raw)
}

// askTool calls the hook's MCP tool with the document, and reads its
// answer from the result: the structured content, else the first text.
func (c *Chain) askTool(ctx context.Context, h *hook, doc []byte) (answer, error) {
	res, err := c.callTool(ctx, h.spec.URL, h.spec.Tool, doc)
	switch {
	case ctx.Err() != nil:
		return answer{}, fmt.Errorf("no answer within %s", h.spec.Timeout)
	case err != nil:
		return answer{}, fmt.Errorf("its tool %s: %w", h.spec.Tool, err)
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(res, &r); err != nil {
		return answer{}, errAnswer
	}
	switch {
	case r.IsError:
		return answer{}, fmt.Errorf("its tool %s answered an error", h.spec.Tool)
	case len(r.StructuredContent) > 0:
		return decodeAnswer(r.StructuredContent)
	case len(r.Content) > 0:
		return decodeAnswer([]byte(r.Content[0].Text))
	}
	return answer{}, errAnswer
}

// errAnswer is a hook's answer that is not one.
var errAnswer = errors.New(`its answer is not {"decision": "allow" or "deny", ...}`)

// decodeAnswer reads a hook's answer: a JSON object whose decision is
// allow or deny, its arguments and result objects when it gives them.
func decodeAnswer(raw []byte) (answer, error) {
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil || (a.Decision != "allow" && a.Decision != "deny") {
		return answer{}, errAnswer
	}
	for _, v := range []json.RawMessage{a.Arguments, a.Result} {
		if len(v) > 0 && string(v) != "null" && v[0] != '{' {
			return answer{}, errAnswer
		}
	}
	if string(a.Arguments) == "null" {
		a.Arguments = nil
	}
	if string(a.Result) == "null" {
		a.Result = nil
	}
	return a, nil
}

// deny is the refusal of a hook's denial, recorded for the audit.
func (c *Chain) deny(h *hook, r *mcp.Request, msg string) error {
	c.counted(h, Denied)
	r.SetDeniedBy(mcp.DeniedByInterceptor + h.spec.Name)
	if msg == "" {
		msg = "denied by interceptor " + h.spec.Name
	}
	return jsonrpc.NewError(jsonrpc.CodeForbidden, msg, map[string]string{"kind": string(mcp.KindForbidden), "interceptor": h.spec.Name})
}

// readApart refuses a call whose params, or whose answer, hold two keys
// of one object that readers could take for one (jsonrpc.FoldTwins). A
// hook in Go reads {"text":"secret","TEXT":"fine"} as fine, and a backend
// or a client in JavaScript as secret. The hook's verdict would not hold
// for what is acted on, so the call is refused whatever its fail mode.
func (c *Chain) readApart(h *hook, r *mcp.Request, what, key, other string) error {
	return c.deny(h, r, fmt.Sprintf("refused: the %s hold the keys %q and %q, which readers could take for one; interceptor %s cannot judge them",
		what, textcut.Valid(key, 64), textcut.Valid(other, 64), h.spec.Name))
}

// failed is what a hook that failed comes to: nothing (fail: open), or a
// denial (fail: closed). The log says why either way.
func (c *Chain) failed(h *hook, r *mcp.Request, err error) error {
	if h.spec.FailOpen {
		c.counted(h, FailedOpen)
		r.AddHook(h.spec.Name, FailedOpen)
		c.log.Warn("interceptor failed; the call goes on (fail: open)", "interceptor", h.spec.Name, "err", err)
		return nil
	}
	c.counted(h, FailedShut)
	c.log.Warn("interceptor failed; the call is refused (fail: closed)", "interceptor", h.spec.Name, "err", err)
	r.SetDeniedBy(mcp.DeniedByInterceptor + h.spec.Name)
	return jsonrpc.NewError(jsonrpc.CodeForbidden, "refused: interceptor "+h.spec.Name+" failed ("+err.Error()+"), and it fails closed",
		map[string]string{"kind": string(mcp.KindForbidden), "interceptor": h.spec.Name})
}

func (c *Chain) counted(h *hook, outcome string) {
	if c.count != nil {
		c.count(h.spec.Name, outcome)
	}
}

// shapes name the member a method's result must hold, an array.
var shapes = map[string]string{"tools/call": "content", "resources/read": "contents", "prompts/get": "messages"}

// sameShape checks that a replaced result is one of method's: an object
// whose content (contents, messages) is an array.
func sameShape(method string, res json.RawMessage) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(res, &obj); err != nil {
		return errors.New("not a JSON object")
	}
	key := shapes[method]
	if v := bytes.TrimSpace(obj[key]); key != "" && (len(v) == 0 || v[0] != '[') {
		return fmt.Errorf("no %s array, as a %s result has", key, method)
	}
	return nil
}
