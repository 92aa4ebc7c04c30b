// redact.go is the built-in redactor. On the answer side, it replaces
// secrets in every string of a result: the text of its content, resource
// contents, prompt messages, structured content. It looks for private
// keys, cloud providers' credentials, tokens of known formats, and the
// operator's own patterns. Patterns are RE2, so matching is linear in the text. Only the
// strings that change are written anew; every other byte of the result is
// relayed as it came.

package intercept

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mcpgate/mcpgate/mcp"
)

// BuiltinRedact names the built-in redactor.
const BuiltinRedact = "redact"

// Pattern is a named RE2 expression of what to redact.
type Pattern struct {
	Name, Regexp string
}

// builtinPatterns are what the redactor always looks for.
var builtinPatterns = []Pattern{
	{"private_key", `-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----`},
	{"aws_access_key_id", `\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`},
	{"aws_secret_access_key", `(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}`},
	{"github_token", `\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{82})\b`},
	{"gitlab_token", `\bglpat-[A-Za-z0-9_-]{20,}\b`},
	{"slack_token", `\bxox[abposr]-[A-Za-z0-9-]{10,}\b`},
	{"google_api_key", `\bAIza[0-9A-Za-z_-]{35}\b`},
	{"stripe_key", `\b(?:sk|rk)_live_[0-9A-Za-z]{24,}\b`},
	{"jwt", `\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`},
	{"bearer_token", `(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*`},
	{"mcpgate_token", `\bmcpg_[A-Za-z0-9_-]{43}\b`},
}

type redactor struct {
	names []string
	res   []*regexp.Regexp
}

func newRedactor(own []Pattern) (*redactor, error) {
	r := &redactor{}
	for _, p := range append(append([]Pattern{}, builtinPatterns...), own...) {
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", p.Name, err)
		}
		r.names, r.res = append(r.names, p.Name), append(r.res, re)
	}
	return r, nil
}

// text redacts s; counts gains each pattern's replacements.
func (r *redactor) text(s string, counts map[string]int) (string, bool) {
	changed := false
	for i, re := range r.res {
		n := 0
		out := re.ReplaceAllStringFunc(s, func(string) string { n++; return "[REDACTED:" + r.names[i] + "]" })
		if n > 0 {
			s, changed = out, true
			counts[r.names[i]] += n
		}
	}
	return s, changed
}

// redact is res with its secrets replaced, the counts recorded for the
// audit and the metrics.
func (c *Chain) redact(h *hook, r *mcp.Request, res json.RawMessage) json.RawMessage {
	counts := map[string]int{}
	out, changed := redactStrings(res, func(s string) (string, bool) { return h.red.text(s, counts) })
	if !changed {
		c.counted(h, Allowed)
		return res
	}
	c.counted(h, RedactedOut)
	names := make([]string, 0, len(counts))
	for name, n := range counts {
		names = append(names, fmt.Sprintf("%s=%d", name, n))
		if c.redacted != nil {
			c.redacted(name, n)
		}
	}
	sort.Strings(names)
	r.SetRedacted(strings.Join(names, " "))
	return out
}

// redactStrings is raw with every string value (not the keys) passed
// through fn; the bytes of the others, and of everything else, are kept.
// changed is false, and raw returned, when fn changed nothing.
func redactStrings(raw json.RawMessage, fn func(string) (string, bool)) (json.RawMessage, bool) {
	var out []byte
	last := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(raw) && raw[j] != '"' {
			if raw[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(raw) {
			break // not JSON: left as it is
		}
		lit := raw[i : j+1]
		k := j + 1
		for k < len(raw) && (raw[k] == ' ' || raw[k] == '\t' || raw[k] == '\n' || raw[k] == '\r') {
			k++
		}
		if k < len(raw) && raw[k] == ':' { // a key
			i = j
			continue
		}
		var s string
		if json.Unmarshal(lit, &s) == nil {
			if t, ok := fn(s); ok {
				enc, _ := json.Marshal(t)
				out = append(append(out, raw[last:i]...), enc...)
				last = j + 1
			}
		}
		i = j
	}
	if out == nil {
		return raw, false
	}
	return append(out, raw[last:]...), true
}
