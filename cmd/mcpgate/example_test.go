//go:build unix

// example_test.go starts examples/mcpgate.yaml as it is — the file the
// README says starts on one machine — with mcpgate on the PATH and the
// machine's npx, and calls a tool of each of its backends through it.

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestTheExampleConfigurationStartsAsItIs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the filesystem server with npx")
	}
	requireNPX(t) // the example's filesystem server runs by npx
	bin := testkit.Mcpgate(t)
	example, err := filepath.Abs("../../examples/mcpgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// mcpgate on the PATH, as the README's install line puts it.
	path := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(path, "mcpgate")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := firstHourEnv(t, home)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + path + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	work := t.TempDir() // the folder serve runs in: what the filesystem server serves
	hello := filepath.Join(work, "hello.txt")
	if err := os.WriteFile(hello, []byte("hello from the example\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// Only the port is changed, as 8080 may be taken here.
	p := cliStartIn(t, work, env, bin, "serve", "--config", example, "--listen", "127.0.0.1:0")
	printed := p.waitLine(t, "the connect line", func(l string) bool { return strings.HasPrefix(l, "connect:") })
	connect := printed[len(printed)-1]
	url, token := cliMCPURLRE.FindString(connect), cliTokenRE.FindString(connect)
	if url == "" || token == "" {
		t.Fatalf("connect line %q names no URL or no token", connect)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // npx may download the server
	defer cancel()
	if err := ccAwaitReady(ctx, strings.TrimSuffix(url, "/mcp")+"/readyz"); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}

	session := cliSession(t, url, token)
	_, body := cliPost(t, url, token, session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	for _, tool := range []string{`"files__read_text_file"`, `"files__write_file"`, `"fixture__test_simple_text"`} {
		if !strings.Contains(body, tool) {
			t.Errorf("the example's tools/list lacks %s: %s", tool, body)
		}
	}
	_, body = cliPost(t, url, token, session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"files__read_text_file","arguments":{"path":"`+hello+`"}}}`)
	if !strings.Contains(body, "hello from the example") {
		t.Errorf("files__read_text_file through the example: %s", body)
	}
	_, body = cliPost(t, url, token, session, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fixture__test_simple_text","arguments":{}}}`)
	if !strings.Contains(body, "This is a simple text response for testing.") {
		t.Errorf("fixture__test_simple_text through the example: %s", body)
	}
	p.stop(t)
}
