// rules.go is the policy's rules in CEL (policy.CompileRules): who may
// call what, finer than roles, read from who calls, what they call with
// what, and when.

package config

import "github.com/mcpgate/mcpgate/internal/policy"

// PolicyConfig is the gate's rules beyond roles.
type PolicyConfig struct {
	// Rules are checked in order after the role check and before the
	// rate limit, on every call; the first that denies ends it (-32001
	// with its message). Variables: principal (subject, role, token,
	// id, groups, claims), request (method, entry, origin, backend, kind,
	// arguments, uri, era, client) and now.
	Rules []PolicyRule `yaml:"rules"`
}

// PolicyRule is one rule: a call it matches is denied unless deny_unless
// holds.
type PolicyRule struct {
	// Name names the rule in the denial's data, the audit and the log.
	Name string `yaml:"name"`
	// Match is a CEL expression choosing the calls the rule is about
	// (default: every call).
	Match string `yaml:"match"`
	// DenyUnless is a CEL expression a matched call must satisfy.
	DenyUnless string `yaml:"deny_unless"`
	// Message is what a denied caller is told (default: the rule's name).
	Message string `yaml:"message"`
}

// Specs are the rules as policy.CompileRules takes them.
func (p PolicyConfig) Specs() []policy.RuleSpec {
	out := make([]policy.RuleSpec, len(p.Rules))
	for i, r := range p.Rules {
		out[i] = policy.RuleSpec{Name: r.Name, Match: r.Match, DenyUnless: r.DenyUnless, Message: r.Message}
	}
	return out
}

// validatePolicy compiles the rules: an error names the rule and where
// in its expression.
func (c *Config) validatePolicy() error {
	_, err := policy.CompileRules(c.Policy.Specs(), nil)
	if re, ok := err.(*policy.RuleError); ok {
		return bad(re.Key, "%s", re.Msg)
	}
	return err
}
