//go:build unix

// inspector_test.go points the official MCP Inspector's command-line
// client (@modelcontextprotocol/inspector-cli 1.0.3, pinned in
// scripts/node) at `mcpgate serve`, as a person following the printed
// connect line would: with the first-run service token it lists and calls
// a tool over Streamable HTTP; without it, it is refused.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// runInspector runs
//
//	node cli.js --cli URL --transport http [--header "Authorization: Bearer TOKEN"] ARGS...
//
// to completion and returns its stdout, its stderr and how it exited.
//
// The bin (build/cli.js) re-spawns `node` from PATH for the real client, so
// Node 22's folder goes first on PATH, and it runs in its own process group
// so that a timeout kills both. The client reads ../package.json relative to
// its working directory: its own build folder satisfies that.
func runInspector(t *testing.T, p peers.Peers, url, token string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := []string{p.InspectorCLI, "--cli", url, "--transport", "http"}
	if token != "" {
		argv = append(argv, "--header", "Authorization: Bearer "+token)
	}
	cmd := exec.CommandContext(ctx, p.Node22, append(argv, args...)...)
	cmd.Dir = filepath.Dir(p.InspectorCLI)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(p.Node22)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("Inspector CLI %v did not finish in 60s; stdout:\n%s\nstderr:\n%s", args, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), err
}

func TestInspectorCLI(t *testing.T) {
	p := peers.Require(t)
	bin := testkit.Mcpgate(t)

	db := filepath.Join(t.TempDir(), "mcpgate.db")
	srv := cliStart(t, bin, "serve", "--listen", "127.0.0.1:0", "--store", db)
	printed := srv.waitLine(t, "the connect command", func(l string) bool { return strings.HasPrefix(l, "connect:") })
	connect := printed[len(printed)-1]
	url := cliMCPURLRE.FindString(connect)
	token := cliTokenRE.FindString(connect)
	if url == "" || token == "" {
		t.Fatalf("connect line %q names no URL or no token", connect)
	}

	t.Run("tools/list", func(t *testing.T) {
		stdout, stderr, err := runInspector(t, p, url, token, "--method", "tools/list")
		if err != nil {
			t.Fatalf("inspector tools/list: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
		}
		var r struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("inspector tools/list output is not the result: %v\n%s", err, stdout)
		}
		var names []string
		for _, tool := range r.Tools {
			names = append(names, tool.Name)
		}
		if !slices.Contains(names, "test_simple_text") {
			t.Errorf("inspector tools/list = %v, want test_simple_text among them", names)
		}
	})

	t.Run("tools/call", func(t *testing.T) {
		stdout, stderr, err := runInspector(t, p, url, token, "--method", "tools/call", "--tool-name", "test_simple_text")
		if err != nil {
			t.Fatalf("inspector tools/call: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
		}
		var r struct {
			Content []struct{ Type, Text string } `json:"content"`
			IsError bool                          `json:"isError"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("inspector tools/call output is not the result: %v\n%s", err, stdout)
		}
		if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" ||
			r.Content[0].Text != "This is a simple text response for testing." {
			t.Errorf("inspector tools/call test_simple_text =\n%s\nwant the one simple text", stdout)
		}
	})

	t.Run("no token is refused", func(t *testing.T) {
		stdout, stderr, err := runInspector(t, p, url, "", "--method", "tools/list")
		var exit *exec.ExitError
		if err == nil || !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("inspector without a token: %v, want a non-zero exit\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
		}
		if low := strings.ToLower(stderr); !strings.Contains(low, "401") && !strings.Contains(low, "unauthorized") {
			t.Errorf("inspector without a token failed, but not for want of one:\n%s", stderr)
		}
		if strings.Contains(stdout, "test_simple_text") {
			t.Errorf("inspector without a token listed tools:\n%s", stdout)
		}
	})

	srv.stop(t)
}
