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
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestTheTypeScriptSDKsOAuthClientConnects(t *testing.T) {
	p := peers.Require(t)
	bin := testkit.Mcpgate(t)
	is := oauthtest.New(t, "/realm")
	is.Scope = "mcp:read"
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	srv, addr := cliStartOnFreeAddr(t, func(addr string) *cliProc {
		writeText(t, cfg, "listen: "+addr+"\nstore: "+filepath.Join(dir, "mcpgate.db")+"\nauth:\n  oauth:\n    resource: http://"+addr+"/mcp"+
			"\n    authorization_servers: [{issuer: \""+is.ID+"\"}]\n    scopes: {mcp:read: viewer, mcp:admin: admin}\n")
		return cliStart(t, bin, "serve", "--config", cfg)
	})
	resource := "http://" + addr + "/mcp"
	srv.waitLine(t, "the connect line", func(l string) bool { return strings.HasPrefix(l, "connect:") })

	steps, out := runOAuthClient(t, p, srv, resource)
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

// runOAuthClient runs testdata/oauth_client.cjs with args and returns its
// steps by name, and what it printed.
func runOAuthClient(t *testing.T, p peers.Peers, srv *cliProc, args ...string) (map[string]map[string]any, []byte) {
	t.Helper()
	script, _ := filepath.Abs("testdata/oauth_client.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Node22, append([]string{script}, args...)...)
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
	return steps, out
}

// The SDK's OAuth client through the built-in authorization server: it
// discovers it from the gateway's metadata, registers, and a person signs
// in on the page with the service token an admin gave them (the test
// reads the page and posts its form); the client gets the role it asked
// for, no more than the token's, refreshes, and a replayed refresh token
// revokes the grant, which the CLI then lists as revoked.
func TestTheTypeScriptSDKsOAuthClientSignsInThroughTheBuiltinServer(t *testing.T) {
	p := peers.Require(t)
	bin := testkit.Mcpgate(t)
	b := startBuiltinServe(t, bin, "editor")
	addr, resource, db, secret, srv := b.addr, "http://"+b.addr+"/mcp", b.db, b.secret, b.srv

	steps, printed := runOAuthClient(t, p, srv, resource, secret)
	// With no scope mapping each role is a scope; the 401 names the least
	// (viewer), which is what the SDK asks for.
	if a := steps["authorize"]; a == nil || a["resource"] != resource || a["method"] != "S256" || a["scope"] != "viewer" ||
		!strings.HasPrefix(a["client_id"].(string), "mcpc_") {
		t.Errorf("the authorization request: %v", a)
	}
	if s := steps["signed-in"]; s == nil || s["client"] != "mcpgate oauth test" || s["role"] != "viewer" || s["status"].(float64) != 303 ||
		s["state_kept"] != true || s["iss"] != "http://"+addr {
		t.Errorf("the sign-in: %v", s)
	}
	if tk := steps["token"]; tk == nil || tk["token_type"] != "Bearer" || tk["refresh"] != true || tk["scope"] != "viewer" {
		t.Errorf("the token: %v", tk)
	}
	if c := steps["called"]; c == nil || c["text"] != "This is a simple text response for testing." {
		t.Errorf("the call: %v\nall:\n%s", c, printed)
	}
	if r := steps["refreshed"]; r == nil || r["result"] != "AUTHORIZED" || r["rotated"] != true || r["new_access"] != true ||
		r["text"] != "This is a simple text response for testing." {
		t.Errorf("the refresh: %v", r)
	}
	if r := steps["replayed"]; r == nil || r["status"].(float64) != 400 || r["error"] != "invalid_grant" || r["after_status"].(float64) != 401 {
		t.Errorf("the replayed refresh token: %v", r)
	}
	list, stderr, err := cliRun(t, bin, "oauth", "grants", "--store", db)
	if err != nil || !strings.Contains(list, "ada") || !strings.Contains(list, "mcpgate oauth test") || !strings.Contains(list, "revoked ") {
		t.Errorf("oauth grants: %v\n%s%s", err, list, stderr)
	}
	// The audit log is written in batches: stopping the server flushes
	// it, so the tail below reads every record rather than racing the
	// next batch (it failed every time on a fast machine).
	srv.stop(t)
	audit, _, _ := cliRun(t, bin, "audit", "tail", "--store", db)
	for _, want := range []string{"register", "authorize", "token", "refresh"} {
		if !strings.Contains(audit, want) {
			t.Errorf("the audit log lacks %s:\n%s", want, audit)
		}
	}
}

// builtinServe is a `mcpgate serve` with the built-in authorization
// server, and a service token (of the role asked) for a person to sign
// in with.
type builtinServe struct {
	addr, db, secret string
	srv              *cliProc
}

func startBuiltinServe(t *testing.T, bin, role string, oauthLines ...string) builtinServe {
	t.Helper()
	var b builtinServe
	dir := t.TempDir()
	b.db = filepath.Join(dir, "mcpgate.db")
	cfg := filepath.Join(dir, "mcpgate.yaml")
	out, stderr, err := cliRun(t, bin, "token", "create", "--store", b.db, "--name", "ada", "--role", role)
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, stderr)
	}
	b.secret = cliTokenRE.FindString(out)
	b.srv, b.addr = cliStartOnFreeAddr(t, func(addr string) *cliProc {
		yaml := "listen: " + addr + "\nstore: " + b.db + "\nauth:\n  oauth:\n    resource: http://" + addr + "/mcp\n    builtin: true\n"
		for _, l := range oauthLines {
			yaml += "    " + l + "\n"
		}
		writeText(t, cfg, yaml)
		return cliStart(t, bin, "serve", "--config", cfg)
	})
	b.srv.waitLine(t, "the connect line", func(l string) bool { return strings.HasPrefix(l, "connect:") })
	return b
}
