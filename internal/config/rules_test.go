package config

import "testing"

// The policy's rules are compiled when the configuration loads: one that
// does not compile is refused, naming its key and where in it.
func TestPolicyRulesAreCompiledWhenTheConfigurationLoads(t *testing.T) {
	wantKey(t, "policy:\n  rules:\n    - {name: ok, match: 'principal.role == \"viewer\"', deny_unless: 'request.arguments.path.startsWith(\"/srv/\")'}\n", "")
	wantKey(t, "policy:\n  rules:\n    - {name: ok, deny_unless: 'true'}\n    - {name: broken, deny_unless: 'principal.role =='}\n", "policy.rules[1].deny_unless")
	wantKey(t, "policy:\n  rules:\n    - {name: nomatch, match: 'request.nope(', deny_unless: 'true'}\n", "policy.rules[0].match")
}
