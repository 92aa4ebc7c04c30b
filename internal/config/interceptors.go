// interceptors.go is the hooks called at fixed points of a gated call
// (package intercept): an operator's webhook, or the built-in redactor.

package config

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/mcpgate/mcpgate/internal/intercept"
)

// InterceptorConfig is one interceptor.
type InterceptorConfig struct {
	// Name names it in the denials' data, the audit, the log and the
	// metrics.
	Name string `yaml:"name"`
	// URL is the webhook it POSTs each call's document to (http or
	// https); it answers {"decision": "allow" or "deny", "message": ...}.
	// With tool, it is an MCP server's URL (Streamable HTTP) instead.
	URL string `yaml:"url"`
	// Kind is webhook (the default) or mcp: url is an MCP server's, and
	// tool names the tool that is the hook.
	Kind string `yaml:"kind"`
	// Tool makes the interceptor a tool of the MCP server at url, called
	// with the document as its arguments; it answers the same object in
	// its structured content, or as JSON in its text.
	Tool string `yaml:"tool"`
	// Builtin names one in the binary instead: redact (the answer side:
	// private keys, cloud credentials, known token formats, and patterns).
	Builtin string `yaml:"builtin"`
	// On is request (before the backend), response (after it), or both
	// (default: both; redact: response).
	On []string `yaml:"on"`
	// Match chooses the calls, in CEL over the policy's variables
	// (default: every gated call).
	Match string `yaml:"match"`
	// Mode is validate (allow or deny, the default) or mutate (the answer
	// may give "arguments" or "result" to use instead).
	Mode string `yaml:"mode"`
	// Timeout bounds one call of the webhook (default 1s).
	Timeout Duration `yaml:"timeout"`
	// Fail is closed (a hook that fails denies the call, the default) or
	// open (the call goes on).
	Fail string `yaml:"fail"`
	// Patterns are the redactor's own, name to RE2 expression.
	Patterns map[string]string `yaml:"patterns"`
}

// InterceptorSpecs are the interceptors as package intercept takes them.
func (c *Config) InterceptorSpecs() []intercept.HookSpec {
	out := make([]intercept.HookSpec, 0, len(c.Interceptors))
	for _, ic := range c.Interceptors {
		s := intercept.HookSpec{Name: ic.Name, URL: ic.URL, Tool: ic.Tool, Builtin: ic.Builtin, Match: ic.Match, Mutate: ic.Mode == "mutate",
			Timeout: time.Duration(ic.Timeout.Duration), FailOpen: ic.Fail == "open"}
		for _, on := range ic.On {
			s.Request, s.Response = s.Request || on == "request", s.Response || on == "response"
		}
		if len(ic.On) == 0 {
			s.Request, s.Response = true, true
		}
		for name, re := range ic.Patterns {
			s.Patterns = append(s.Patterns, intercept.Pattern{Name: name, Regexp: re})
		}
		out = append(out, s)
	}
	return out
}

func (c *Config) validateInterceptors() error {
	seen := map[string]bool{}
	for i, ic := range c.Interceptors {
		key := fmt.Sprintf("interceptors[%d]", i)
		switch {
		case ic.Name == "":
			return bad(key+".name", "required")
		case seen[ic.Name]:
			return bad(key+".name", "%q names another interceptor too", ic.Name)
		case (ic.URL == "") == (ic.Builtin == ""):
			return bad(key, "name a url (a webhook) or a builtin (redact), one of them")
		case ic.Builtin != "" && ic.Builtin != intercept.BuiltinRedact:
			return bad(key+".builtin", "%q is not redact", ic.Builtin)
		case ic.Mode != "" && ic.Mode != "validate" && ic.Mode != "mutate":
			return bad(key+".mode", "%q is not validate or mutate", ic.Mode)
		case ic.Fail != "" && ic.Fail != "open" && ic.Fail != "closed":
			return bad(key+".fail", "%q is not open or closed", ic.Fail)
		case ic.Builtin == "" && len(ic.Patterns) > 0:
			return bad(key+".patterns", "only the redactor takes patterns")
		case ic.Tool != "" && ic.URL == "":
			return bad(key+".tool", "names a tool of the MCP server at url: url is required")
		case ic.Kind != "" && ic.Kind != "webhook" && ic.Kind != "mcp":
			return bad(key+".kind", "%q is not webhook or mcp", ic.Kind)
		case ic.Kind == "mcp" && ic.Tool == "":
			return bad(key+".tool", "required with kind: mcp: the MCP server's tool that is the hook")
		case ic.Kind == "webhook" && ic.Tool != "":
			return bad(key+".tool", "goes with kind: mcp")
		}
		seen[ic.Name] = true
		for j, on := range ic.On {
			if on != "request" && on != "response" {
				return bad(fmt.Sprintf("%s.on[%d]", key, j), "%q is not request or response", on)
			}
		}
		if ic.URL != "" {
			if u, err := url.Parse(ic.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return bad(key+".url", "not an http or https URL")
			}
		}
	}
	noCall := func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) { return nil, nil }
	if _, err := intercept.New(c.InterceptorSpecs(), intercept.Options{CallTool: noCall}); err != nil {
		return bad("interceptors", "%v", err)
	}
	return nil
}
