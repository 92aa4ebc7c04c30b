package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mcpgate/mcpgate/"

// allowed lists, for each package, the packages of ours it may import.
// A package missing here may import nothing of ours; a new package must be
// placed in the layering on purpose.
var allowed = map[string][]string{
	"jsonrpc":           {},
	"sse":               {},
	"mcp":               {"jsonrpc"},
	"mcphttp":           {"jsonrpc", "mcp", "sse"},
	"stdio":             {"jsonrpc", "mcp"},
	"fixture":           {"jsonrpc", "mcp"},
	"store":             {},
	"store/sqlite":      {"store"},
	"auth":              {"mcp", "store"},
	"access":            {"jsonrpc", "mcp"},
	"audit":             {"jsonrpc", "mcp", "store"},
	"metrics":           {"audit", "jsonrpc", "mcp", "store"},
	"config":            {},
	"gateway":           {"access", "audit", "auth", "backend", "config", "mcp", "mcphttp", "metrics", "relay", "stdio", "store", "telemetry"},
	"telemetry":         {"audit", "jsonrpc", "mcp", "store"},
	"wire":              {"jsonrpc"},
	"proxy":             {"jsonrpc", "mcp", "mcphttp", "stdio", "wire"},
	"relay":             {"jsonrpc", "mcp"},
	"backend":           {"jsonrpc", "mcp", "mcphttp", "relay", "stdio", "wire"},
	"internal/mcptest":  {"jsonrpc"},
	"internal/otlptest": {},
	"internal/peers":    {},
	"internal/layout":   {},
	"cmd/mcpgate":       {"*"},
	"bench":             {"*"},
}

// No package imports one above it in the layering.
func TestImportsFlowOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		rules, known := allowed[pkg]
		if !known {
			t.Errorf("package %s has no place in the layering (add it to allowed)", pkg)
			continue
		}
		if len(rules) == 1 && rules[0] == "*" {
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if !contains(rules, dep) {
				t.Errorf("%s imports %s, which is not below it", pkg, dep)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
