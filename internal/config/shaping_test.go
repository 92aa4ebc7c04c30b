package config

import (
	"errors"
	"testing"
)

// A backend's tools and prompts rules are refused at load, naming the
// key, wherever they could not be applied as written.
func TestShapingErrorsNameTheKey(t *testing.T) {
	const base = "backends:\n  - name: gh\n    kind: http\n    url: https://tools.example/mcp\n"
	good := base + `    tools:
      - {name: "delete_*", hide: true}
      - name: search_issues
        rename: find_issues
        description: Search issues in our repos.
        title: Find issues
        annotations: {readOnlyHint: true}
        arguments:
          fixed: {owner: our-org, filter: {state: open}}
          defaults: {per_page: 20}
          hide: [debug]
    prompts:
      - {name: draft, rename: write, description: Draft a reply., arguments: {fixed: {tone: formal}}}
      - {name: "old_*", hide: true}
`
	cfg, err := Parse([]byte(good))
	if err != nil {
		t.Fatalf("a valid shaping: %v", err)
	}
	if got := cfg.Backends[0].Tools[1].Arguments.Fixed["filter"]; got == nil {
		t.Fatalf("a fixed object value was not read: %+v", cfg.Backends[0].Tools[1].Arguments)
	}
	for _, c := range []struct{ name, yaml, key string }{
		{"a rule for no name", base + "    tools: [{rename: x}]\n", "backends[0].tools[0].name"},
		{"a bad pattern", base + "    tools: [{name: \"[\", hide: true}]\n", "backends[0].tools[0].name"},
		{"hidden and renamed", base + "    tools: [{name: a, hide: true, rename: b}]\n", "backends[0].tools[0].hide"},
		{"hidden with arguments", base + "    tools: [{name: a, hide: true, arguments: {hide: [x]}}]\n", "backends[0].tools[0].hide"},
		{"a pattern renamed", base + "    tools: [{name: \"a*\", rename: b}]\n", "backends[0].tools[0].rename"},
		{"a rename that is no name", base + "    tools: [{name: a, rename: \"b c\"}]\n", "backends[0].tools[0].rename"},
		{"two tools renamed alike", base + "    tools: [{name: a, rename: c}, {name: b, rename: c}]\n", "backends[0].tools[1].rename"},
		{"fixed and defaulted", base + "    tools: [{name: a, arguments: {fixed: {x: 1}, defaults: {x: 2}}}]\n", "backends[0].tools[0].arguments.defaults.x"},
		{"fixed and hidden", base + "    tools: [{name: a, arguments: {fixed: {x: 1}, hide: [x]}}]\n", "backends[0].tools[0].arguments.hide"},
		{"defaulted and hidden", base + "    tools: [{name: a, arguments: {defaults: {x: 1}, hide: [x]}}]\n", "backends[0].tools[0].arguments.hide"},
		{"an empty hidden argument", base + "    tools: [{name: a, arguments: {hide: [\"\"]}}]\n", "backends[0].tools[0].arguments.hide[0]"},
		{"a prompt default", base + "    prompts: [{name: a, arguments: {defaults: {x: y}}}]\n", "backends[0].prompts[0].arguments"},
		{"a prompt argument not a string", base + "    prompts: [{name: a, arguments: {fixed: {x: 1}}}]\n", "backends[0].prompts[0].arguments.fixed.x"},
		{"two prompts renamed alike", base + "    prompts: [{name: a, rename: c}, {name: b, rename: c}]\n", "backends[0].prompts[1].rename"},
		{"an unknown key", base + "    tools: [{name: a, renamed: b}]\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if c.key == "" {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != c.key {
				t.Errorf("%v, want a KeyError at %s", err, c.key)
			}
		})
	}
}
