//go:build unix

// firsthour_test.go follows the README as a new user would, on a clean
// HOME: its first command starts the gateway, the Inspector line the
// gateway prints lists the tools as it stands, the README's Inspector line
// for tools/call calls one through the gateway with the printed token, and
// the README's install line puts mcpgate on the PATH for `mcpgate token
// list`. The Inspector runs with the machine's own npx (Node 20 on CI, the
// least the README promises), not the Node 22 of the test peers.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireNPX skips the test without npx on the PATH (fails it when the
// peers are required: the README promises Node 20 and npm).
func requireNPX(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("npx"); err != nil {
		if os.Getenv("MCPGATE_REQUIRE_PEERS") != "" {
			t.Fatal("npx is not on the PATH: the README promises Node 20 and npm")
		}
		t.Skip("npx is not on the PATH")
	}
}

// firstHourEnv is a clean HOME and nothing of mcpgate's or npm's state
// from this machine. Go's build and module caches are the toolchain's,
// not the user's state, and are kept (a clean one would rebuild and
// download every module); npm's cache lives in the repository's ignored
// .cache, so that a second run downloads nothing.
func firstHourEnv(t *testing.T, home string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(strings.ToLower(k), "npm_") ||
			strings.HasPrefix(k, "MCPGATE_") || k == "GOPATH" || k == "GOBIN" {
			continue
		}
		env = append(env, kv)
	}
	goenv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return append(env, "HOME="+home, "GOPATH="+filepath.Join(home, "go"),
		"GOCACHE="+goenv("GOCACHE"), "GOMODCACHE="+goenv("GOMODCACHE"),
		"npm_config_cache="+filepath.Join(root, ".cache", "npm"), "npm_config_update_notifier=false")
}

// shellRun runs line with sh in dir and returns its stdout and stderr.
func shellRun(t *testing.T, env []string, dir, line string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish in 5 minutes; stdout:\n%s\nstderr:\n%s", line, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), err
}

func TestReadmeFirstHourOnACleanHome(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads the Inspector once and builds mcpgate twice")
	}
	requireNPX(t)
	home := t.TempDir()
	env := firstHourEnv(t, home)
	root, _ := filepath.Abs("../..")
	var lines []string
	for _, l := range readmeShellLines(t) {
		lines = append(lines, l.Text)
	}

	// The README's first line runs the main job. The test adds only a free
	// port, as 8080 may be taken on this machine.
	first := lines[0]
	if !strings.HasPrefix(first, "go run ./cmd/mcpgate serve") {
		t.Fatalf("the README's first command is %q, not the main job", first)
	}
	serve := exec.Command("sh", "-c", "exec "+first+" --listen 127.0.0.1:0")
	serve.Dir, serve.Env = root, env
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run and the binary it builds
	var serveErr strings.Builder
	serve.Stderr = &serveErr
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	printed := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			printed <- sc.Text()
		}
		close(printed)
		done <- serve.Wait()
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-serve.Process.Pid, syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-serve.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})

	var inspect, token string
	deadline := time.After(3 * time.Minute) // the first go run builds the binary
	for inspect == "" {
		select {
		case line, ok := <-printed:
			if !ok {
				t.Fatalf("serve exited before printing the Inspector line; stderr:\n%s", serveErr.String())
			}
			if m := cliTokenRE.FindString(line); m != "" && token == "" {
				token = m
			}
			if rest, ok := strings.CutPrefix(line, "inspect:"); ok {
				inspect = strings.TrimSpace(rest)
			}
		case <-deadline:
			t.Fatalf("serve printed no Inspector line in 3 minutes; stderr:\n%s", serveErr.String())
		}
	}
	url := cliMCPURLRE.FindString(inspect)
	if token == "" || url == "" {
		t.Fatalf("the first run printed no token or no URL: %q", inspect)
	}

	work := t.TempDir() // npx runs where the user is, not in the repository
	t.Run("the printed Inspector line lists the tools", func(t *testing.T) {
		out, errOut, err := shellRun(t, env, work, inspect)
		if err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", inspect, err, out, errOut)
		}
		var r struct{ Tools []struct{ Name string } }
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Tools) == 0 {
			t.Fatalf("the printed Inspector line printed no tools (%v):\n%s\nstderr:\n%s", err, out, errOut)
		}
		if strings.Contains(errOut, "EBADENGINE") || strings.Contains(errOut, "deprecated") {
			t.Errorf("the printed Inspector line warns a user:\n%s", errOut)
		}
	})

	t.Run("the README's Inspector line calls a tool through the gateway", func(t *testing.T) {
		var call string
		for _, l := range lines {
			if strings.HasPrefix(l, "npx ") && strings.Contains(l, "--method tools/call") {
				call = l
			}
		}
		if call == "" {
			t.Fatal("the README shows no Inspector line for tools/call")
		}
		if !strings.HasPrefix(call, inspectorCommand+" ") {
			t.Errorf("the README's Inspector line %q does not start as the printed one (%s)", call, inspectorCommand)
		}
		call = strings.ReplaceAll(strings.ReplaceAll(call, "http://127.0.0.1:8080/mcp", url), "mcpg_…", token)
		out, errOut, err := shellRun(t, env, work, call)
		if err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", call, err, out, errOut)
		}
		var r struct {
			Content []struct{ Type, Text string }
			IsError bool
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.IsError || len(r.Content) == 0 || r.Content[0].Text != "Hello, Ada!" {
			t.Fatalf("the README's tools/call answered (%v):\n%s\nstderr:\n%s", err, out, errOut)
		}
	})

	t.Run("the README's install line puts mcpgate on the PATH", func(t *testing.T) {
		var install string
		for _, l := range lines {
			if strings.HasPrefix(l, "go install ./cmd/mcpgate") {
				install = l
			}
		}
		if install == "" {
			t.Fatal("the README has no install line")
		}
		out, errOut, err := shellRun(t, env, root, install+" && cd / && mcpgate token list")
		if err != nil {
			t.Fatalf("%s && mcpgate token list: %v\nstdout:\n%s\nstderr:\n%s", install, err, out, errOut)
		}
		if !strings.Contains(out, "first-run admin") || strings.Contains(out, token) {
			t.Errorf("mcpgate token list on the default store:\n%s", out)
		}
	})
}
