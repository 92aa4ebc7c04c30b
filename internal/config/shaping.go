// shaping.go is how a backend's tools and prompts are shaped before
// callers see them: hidden, renamed, described anew, and with arguments
// fixed, defaulted or hidden. What can be checked without the backend's
// own list is checked here; the rest when the gateway lists the backend
// (catalogue/shape.go).

package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ToolShape is one rule of a backend's tools: the first rule whose name
// matches a tool shapes it.
type ToolShape struct {
	// Name is the backend's own tool name, or a path.Match pattern such
	// as "delete_*".
	Name string `yaml:"name"`
	// Hide leaves the tool out of every list and refuses its calls, for
	// every caller. It takes no other setting.
	Hide bool `yaml:"hide"`
	// Rename is the name callers see (the prefix still goes before it);
	// for a rule naming one tool, not a pattern.
	Rename string `yaml:"rename"`
	// Description replaces the backend's description.
	Description string `yaml:"description"`
	// Title replaces the backend's title.
	Title string `yaml:"title"`
	// Annotations are merged over the backend's, key by key.
	Annotations map[string]any `yaml:"annotations"`
	// Arguments shapes the tool's input.
	Arguments ShapeArguments `yaml:"arguments"`
}

// ShapeArguments shapes a tool's or a prompt's arguments.
type ShapeArguments struct {
	// Fixed values are always sent and removed from the schema callers
	// see; a caller who sends one is refused with -32602.
	Fixed map[string]any `yaml:"fixed"`
	// Defaults are sent when the caller leaves the argument out, and
	// shown as the schema's default (tools only).
	Defaults map[string]any `yaml:"defaults"`
	// Hide removes arguments from the schema callers see; a caller who
	// sends one is refused with -32602 (tools only).
	Hide []string `yaml:"hide"`
}

// PromptShape is one rule of a backend's prompts, as ToolShape is of its
// tools: hide, rename, description and fixed arguments.
type PromptShape struct {
	// Name is the backend's own prompt name, or a path.Match pattern.
	Name string `yaml:"name"`
	// Hide leaves the prompt out of every list and refuses it.
	Hide bool `yaml:"hide"`
	// Rename is the name callers see (the prefix still goes before it).
	Rename string `yaml:"rename"`
	// Description replaces the backend's.
	Description string `yaml:"description"`
	// Arguments shapes the prompt's arguments: only fixed applies.
	Arguments ShapeArguments `yaml:"arguments"`
}

// validateShaping checks a backend's tools and prompts rules.
func validateShaping(key string, b BackendConfig) error {
	renamed := map[string]string{}
	rename := func(rk, kind, name, as string) error {
		if as == "" {
			return nil
		}
		if strings.ContainsAny(name, `*?[\`) {
			return bad(rk+".rename", "a pattern (%q) names several %ss; rename one at a time", name, kind)
		}
		if !validEntryName(as) {
			return bad(rk+".rename", "%q is not a name: 1 to 128 of A-Z a-z 0-9 _ - .", as)
		}
		if other, dup := renamed[kind+" "+as]; dup {
			return bad(rk+".rename", "%q is also the new name of %s", as, other)
		}
		renamed[kind+" "+as] = rk
		return nil
	}
	for i, r := range b.Tools {
		rk := fmt.Sprintf("%s.tools[%d]", key, i)
		if err := validateEntryRule(rk, "", r.Name, "delete_*"); err != nil {
			return err
		}
		if r.Hide && (r.Rename != "" || r.Description != "" || r.Title != "" || len(r.Annotations) > 0 || !r.Arguments.empty()) {
			return bad(rk+".hide", "a hidden tool takes no other setting")
		}
		if err := rename(rk, "tool", r.Name, r.Rename); err != nil {
			return err
		}
		if err := r.Arguments.validate(rk + ".arguments"); err != nil {
			return err
		}
	}
	for i, r := range b.Prompts {
		rk := fmt.Sprintf("%s.prompts[%d]", key, i)
		if err := validateEntryRule(rk, "", r.Name, "draft_*"); err != nil {
			return err
		}
		if r.Hide && (r.Rename != "" || r.Description != "" || !r.Arguments.empty()) {
			return bad(rk+".hide", "a hidden prompt takes no other setting")
		}
		if len(r.Arguments.Defaults) > 0 || len(r.Arguments.Hide) > 0 {
			return bad(rk+".arguments", "a prompt's arguments take fixed only")
		}
		if err := rename(rk, "prompt", r.Name, r.Rename); err != nil {
			return err
		}
		if err := r.Arguments.validate(rk + ".arguments"); err != nil {
			return err
		}
		for name, v := range r.Arguments.Fixed {
			if _, ok := v.(string); !ok {
				return bad(rk+".arguments.fixed."+name, "a prompt's arguments are strings")
			}
		}
	}
	return nil
}

func (a ShapeArguments) empty() bool {
	return len(a.Fixed) == 0 && len(a.Defaults) == 0 && len(a.Hide) == 0
}

// validate checks that each argument is shaped one way, and that every
// value can be sent as JSON.
func (a ShapeArguments) validate(key string) error {
	for name, v := range a.Fixed {
		if _, err := json.Marshal(v); err != nil {
			return bad(key+".fixed."+name, "not a JSON value: %v", err)
		}
		if _, dup := a.Defaults[name]; dup {
			return bad(key+".defaults."+name, "also fixed; an argument is fixed, defaulted or hidden")
		}
		if slices.Contains(a.Hide, name) {
			return bad(key+".hide", "%q is also fixed; an argument is fixed, defaulted or hidden", name)
		}
	}
	for name, v := range a.Defaults {
		if _, err := json.Marshal(v); err != nil {
			return bad(key+".defaults."+name, "not a JSON value: %v", err)
		}
		if slices.Contains(a.Hide, name) {
			return bad(key+".hide", "%q also has a default; a hidden argument is never sent", name)
		}
	}
	for i, name := range a.Hide {
		if name == "" {
			return bad(fmt.Sprintf("%s.hide[%d]", key, i), "empty")
		}
	}
	return nil
}

// validEntryName is a tool or prompt name as MCP recommends them: 1 to
// 128 characters of A-Z, a-z, 0-9, _, - and . (SEP-986).
func validEntryName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
