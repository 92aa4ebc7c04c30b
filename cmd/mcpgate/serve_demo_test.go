//go:build unix

// serve_demo_test.go runs `mcpgate serve` as a first-time user would,
// with no backend configured: the demo backend (the fixture behind
// `mcpgate proxy`, both started by serve) lists and calls its tools with
// the printed token, the first run prints the Inspector's command line,
// and an interrupt ends both of the demo's processes.

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestServeDemoBackendEndToEnd(t *testing.T) {
	bin := testkit.Mcpgate(t)
	p := cliStart(t, bin, "serve", "--listen", "127.0.0.1:0") // the store: the default, in a temporary XDG_DATA_HOME
	printed := p.waitLine(t, "the Inspector command", func(l string) bool { return strings.HasPrefix(l, "inspect:") })
	inspect := printed[len(printed)-1]
	url := cliMCPURLRE.FindString(inspect)
	token := cliTokenRE.FindString(inspect)
	if url == "" || token == "" {
		t.Fatalf("inspect line %q names no URL or no token", inspect)
	}
	want := "inspect:  npx -y --loglevel=error @modelcontextprotocol/inspector@2.12.0 --cli " + url + " --transport http --header \"Authorization: Bearer " + token + "\" --method tools/list"
	if inspect != want {
		t.Errorf("inspect line\n%s\nwant\n%s", inspect, want)
	}

	session := cliSession(t, url, token)
	// The connect lines are printed once the demo is up: its tools are
	// there at once.
	_, body := cliPost(t, url, token, session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	for _, tool := range []string{`"test_simple_text"`, `"test_image_content"`, `"test_error_handling"`} {
		if !strings.Contains(body, tool) {
			t.Errorf("tools/list lacks %s: %s", tool, body)
		}
	}
	_, body = cliPost(t, url, token, session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}`)
	if !strings.Contains(body, "This is a simple text response for testing.") {
		t.Errorf("tools/call test_simple_text: %s", body)
	}

	program, proxy := demoPids(t, p.stderr.String())
	p.stop(t)
	for name, pid := range map[string]int{"fixture": program, "proxy": proxy} {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("the demo's %s (pid %d) outlived serve: %v", name, pid, err)
		}
	}
}

// demoPids reads the demo's process ids from serve's JSON log: they are
// logged before the demo is up, and so before the connect lines.
func demoPids(t *testing.T, stderr string) (program, proxy int) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		var l struct {
			Msg        string `json:"msg"`
			Backend    string `json:"backend"`
			ProgramPid int    `json:"program_pid"`
			ProxyPid   int    `json:"proxy_pid"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "backend processes started" && l.Backend == "demo" {
			return l.ProgramPid, l.ProxyPid
		}
	}
	t.Fatalf("serve never logged the demo's processes:\n%s", stderr)
	return 0, 0
}
