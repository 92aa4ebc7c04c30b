//go:build unix

// oauth_test.go connects the official TypeScript SDK's OAuth client to a
// real `mcpgate serve` configured as an OAuth protected resource of an
// external authorization server (a test one, internal/oauthtest): from
// the first 401 to a tools/call, by the SDK's own discovery,
// registration, PKCE and token exchange.

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/peers"
)

func TestTheTypeScriptSDKsOAuthClientConnects(t *testing.T) {
	p := peers.Require(t)
	bin := buildBinary(t)
	is := oauthtest.New(t, "/realm")
	is.Scope = "mcp:read"
	addr := freeAddr(t)
	resource := "http://" + addr + "/mcp"
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	writeText(t, cfg, "listen: "+addr+"\nstore: "+filepath.Join(dir, "mcpgate.db")+"\nauth:\n  oauth:\n    resource: "+resource+
		"\n    authorization_servers: [{issuer: \""+is.ID+"\"}]\n    scopes: {mcp:read: viewer, mcp:admin: admin}\n")
	srv := cliStart(t, bin, "serve", "--config", cfg)
	srv.waitLine(t, "the connect line", func(l string) bool { return strings.HasPrefix(l, "connect:") })

	script, _ := filepath.Abs("testdata/oauth_client.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Node22, script, resource)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(p.Dir, "node_modules"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the SDK's OAuth client: %v\nstdout:\n%s\nstderr:\n%s\ngateway:\n%s", err, out, stderr.String(), srv.stderr)
	}
	steps := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			s, _ := m["step"].(string)
			steps[s] = m
		}
	}
	// The SDK found the authorization server through the gateway's
	// metadata, registered, and asked for a code for this resource, with
	// PKCE and the scope the 401 named.
	if a := steps["authorize"]; a == nil || a["resource"] != resource || a["method"] != "S256" || a["scope"] != "mcp:read" ||
		!strings.HasPrefix(a["client_id"].(string), "client-") {
		t.Errorf("the authorization request: %v", a)
	}
	if tk := steps["token"]; tk == nil || tk["token_type"] != "Bearer" || tk["refresh"] != true {
		t.Errorf("the token: %v", tk)
	}
	if c := steps["called"]; c == nil || c["text"] != "This is a simple text response for testing." || c["tools"].(float64) < 10 {
		t.Errorf("the call: %v\nall:\n%s", c, out)
	}
	srv.stop(t)
}
