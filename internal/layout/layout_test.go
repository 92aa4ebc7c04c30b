// Package layout states how mcpgate's packages stack: layers, bottom up,
// each importing only from the layers below it, and the edges no layering
// would show but that must never exist. A new package is placed in a layer
// on purpose, or the test fails.
package layout

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcpgate/mcpgate/"

// layers, bottom up. A package imports packages of lower layers only.
var layers = [][]string{
	// The outbound policy for fetches on a third party's word, sealing
	// at rest, the pages' look, whether a host stays on this machine, a
	// request's bearer credential, text cut on a character boundary, and
	// an HTTP/1.1 client transport, the garbage collector's room, a
	// bounded map: they import nothing of ours.
	{"internal/egress", "internal/egress/egresstest", "internal/tick", "internal/testkit", "internal/auth/seal", "internal/look", "internal/loopback", "internal/auth/bearer", "internal/textcut", "internal/h1", "internal/heaproom", "internal/fifo"},
	// What the three OAuth roles share: it imports only the outbound
	// policy.
	{"internal/auth/oauthmeta"},
	// Foundations: they import nothing of ours but the two layers below.
	{"internal/auth/oauthclient", "jsonrpc", "sse", "internal/store", "internal/peers", "internal/otlptest", "internal/oauthtest", "internal/layout"},
	// The engine, the wire's codecs, a store.
	{"mcp", "wire", "internal/store/sqlite", "internal/store/postgres", "internal/store/storetest"},
	// Who may see and use what: roles, the gate, rate limits. What
	// speaking to one upstream server means, shared by the relay, the
	// backends and the proxy.
	{"internal/policy", "internal/upstream"},
	// Transports, the relay, and what plugs into the engine:
	// authentication and the observers.
	{"mcphttp", "stdio", "wiremcp", "internal/fixture", "internal/gateway/catalogue", "internal/auth", "internal/auth/personal", "internal/observe/audit", "internal/observe/metrics", "internal/observe/telemetry", "internal/mcptest",
		// The search mode's tools, over the engine's catalogue.
		"internal/gateway/toolsearch",
		// Hooks that check or change an admitted call, matched by the
		// policy's expressions.
		"internal/intercept"},
	// Backends and the proxy: transports and the wire put together; what
	// replicas share (Redis), for the gate's buckets and the transport's
	// sessions.
	{"internal/gateway/backends", "internal/proxy", "internal/cluster",
		// The built-in authorization server: over the store and the
		// service tokens.
		"internal/auth/authserver",
		// The configuration: it checks roles by the policy's rule.
		"internal/config"},
	// The admin console: pages over what the gateway gives it and the
	// configuration.
	{"internal/gateway/admin"},
	// The gateway assembles everything; proxytest serves proxies to tests.
	{"internal/gateway", "internal/proxytest"},
	// Programs.
	{"cmd/mcpgate", "bench", "deploy"},
}

// forbidden are edges between layers that are allowed by the layering but
// not by what the packages are.
var forbidden = []struct {
	rule     string
	from, to []string
}{
	{"the protocol packages know nothing of who calls or what is recorded",
		[]string{"jsonrpc", "sse", "mcp", "wire", "mcphttp", "stdio", "wiremcp", "internal/fixture", "internal/gateway/catalogue", "internal/gateway/backends", "internal/proxy", "internal/gateway/toolsearch"},
		[]string{"internal/policy", "internal/auth", "internal/observe/audit", "internal/observe/metrics", "internal/observe/telemetry", "internal/store", "internal/store/sqlite", "internal/store/postgres"}},
	{"the observers read what the engine resolved, never the audit log or the store",
		[]string{"internal/observe/metrics", "internal/observe/telemetry"},
		[]string{"internal/observe/audit", "internal/store", "internal/store/sqlite", "internal/store/postgres"}},
	{"the gateway reads no payload: that belongs to the engine and the relay",
		[]string{"internal/gateway"},
		[]string{"jsonrpc", "wire", "wiremcp", "sse"}},
}

// imports maps each of our packages to ours it imports (not its tests').
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		m[pkg] = []string{}
		for _, imp := range fields[1:] {
			if dep, ours := strings.CutPrefix(imp, module); ours {
				m[pkg] = append(m[pkg], dep)
			}
		}
	}
	return m
}

func layerOf(pkg string) int {
	for i, l := range layers {
		if slices.Contains(l, pkg) {
			return i
		}
	}
	return -1
}

func TestEveryPackageHasALayer(t *testing.T) {
	for pkg := range imports(t) {
		if layerOf(pkg) < 0 {
			t.Errorf("package %s has no layer: place it in layers on purpose", pkg)
		}
	}
}

func TestNoPackageImportsItsOwnLayerOrOneAbove(t *testing.T) {
	for pkg, deps := range imports(t) {
		top := layers[len(layers)-1]
		if slices.Contains(top, pkg) {
			continue // programs wire anything together
		}
		for _, dep := range deps {
			if layerOf(dep) >= layerOf(pkg) {
				t.Errorf("%s (layer %d) imports %s (layer %d): only lower layers may be imported", pkg, layerOf(pkg), dep, layerOf(dep))
			}
		}
	}
}

func TestForbiddenEdges(t *testing.T) {
	all := imports(t)
	for _, f := range forbidden {
		t.Run(f.rule, func(t *testing.T) {
			for _, from := range f.from {
				for _, dep := range all[from] {
					if slices.Contains(f.to, dep) {
						t.Errorf("%s imports %s", from, dep)
					}
				}
			}
		})
	}
}
