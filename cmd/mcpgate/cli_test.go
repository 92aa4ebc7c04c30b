// cli_test.go runs the built mcpgate binary as a person would: tokens are
// created, listed and revoked in a store, `serve` prints an admin token
// on its first run only and that token works, `audit tail` shows the call,
// and no-auth mode will not bind to an address other machines can reach.

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

var (
	cliTokenRE   = regexp.MustCompile(`mcpg_[A-Za-z0-9_-]{43}`)
	cliTokenIDRE = regexp.MustCompile(`tok_[a-z0-9]+`)
	cliMCPURLRE  = regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
)

// cliRun runs the binary to completion and returns its stdout, its stderr
// and how it exited.
func cliRun(t *testing.T, bin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return cliRunIn(t, bin, "", args...)
}

// cliRunIn is cliRun with stdin as the command's standard input.
func cliRunIn(t *testing.T, bin, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = cliEnv(t)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// cliEnv keeps the binary away from the real default store.
func cliEnv(t *testing.T) []string {
	return append(os.Environ(), "XDG_DATA_HOME="+t.TempDir())
}

// cliProc is a running mcpgate whose stdout is read line by line.
type cliProc struct {
	cmd    *exec.Cmd
	lines  chan string // stdout, closed at its end
	stderr *testkit.Output
	done   chan struct{} // closed once the process has exited
	// printed is closed once the process printed its first line.
	printed chan struct{}
	err     error // how it exited, once done is closed
}

// cliStart starts the binary; the test's cleanup stops it.
func cliStart(t *testing.T, bin string, args ...string) *cliProc {
	t.Helper()
	return cliStartIn(t, "", cliEnv(t), bin, args...)
}

// cliStartOnFreeAddr calls start with a free loopback address until the
// mcpgate it starts serves there, and returns it and the address. Another
// process may take a free address before mcpgate binds it; mcpgate then
// exits saying so, and another is tried (3 tries).
func cliStartOnFreeAddr(t *testing.T, start func(addr string) *cliProc) (*cliProc, string) {
	t.Helper()
	for try := 1; ; try++ {
		addr := testkit.FreePort(t)
		p := start(addr)
		select {
		case <-p.printed: // its first line comes once it listens
			return p, addr
		case <-p.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("mcpgate printed nothing in 30s; stderr:\n%s", p.stderr)
		}
		<-p.done
		if try == 3 || !strings.Contains(p.stderr.String(), "address already in use") {
			t.Fatalf("mcpgate exited (%v) before serving; stderr:\n%s", p.err, p.stderr)
		}
	}
}

// cliStartIn is cliStart in the folder dir ("": this one) with env.
func cliStartIn(t *testing.T, dir string, env []string, bin string, args ...string) *cliProc {
	t.Helper()
	p := &cliProc{cmd: exec.Command(bin, args...), lines: make(chan string, 256), stderr: &testkit.Output{}, done: make(chan struct{}),
		printed: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for first := true; sc.Scan(); first = false {
			p.lines <- sc.Text()
			if first {
				close(p.printed)
			}
		}
		close(p.lines)
		p.err = p.cmd.Wait() // after the last read from the pipe, as os/exec asks
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitLine reads stdout until a line satisfies match, and returns the lines
// read. A child printing has no event to wait on but its output, so the
// wait is bounded by a deadline instead.
func (p *cliProc) waitLine(t *testing.T, what string, match func(string) bool) []string {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	var seen []string
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				<-p.done
				t.Fatalf("mcpgate exited (%v) before printing %s; stdout:\n%s\nstderr:\n%s",
					p.err, what, strings.Join(seen, "\n"), p.stderr)
			}
			seen = append(seen, line)
			if match(line) {
				return seen
			}
		case <-deadline.C:
			t.Fatalf("mcpgate did not print %s in 30s; stdout:\n%s\nstderr:\n%s", what, strings.Join(seen, "\n"), p.stderr)
		}
	}
}

// stop interrupts the process as Ctrl-C would and waits for a clean exit,
// returning whatever it printed on stdout meanwhile.
func (p *cliProc) stop(t *testing.T) []string {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for line := range p.lines { // the pipe closes when the process exits
		rest = append(rest, line)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("mcpgate did not exit after an interrupt; stderr:\n%s", p.stderr)
	}
	if p.err != nil {
		t.Errorf("mcpgate exited with %v after an interrupt; stderr:\n%s", p.err, p.stderr)
	}
	return rest
}

// cliPost sends one JSON-RPC message as a Streamable HTTP client would.
func cliPost(t *testing.T, url, token, session, body string) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// cliSession opens a Streamable HTTP session at url for token, as a
// client does: initialize, then notifications/initialized; it returns
// the session id.
func cliSession(t *testing.T, url, token string) string {
	t.Helper()
	resp, body := cliPost(t, url, token, "", cliInitialize)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	cliPost(t, url, token, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return session
}

// The command line, end to end, on one binary built once.
func TestCLI(t *testing.T) {
	bin := testkit.Mcpgate(t)

	// Every store: the SQLite file of one machine, and a PostgreSQL
	// database replicas share.
	storeOf := func(t *testing.T, kind string) string {
		if kind == "postgres" {
			return peers.StartPostgres(t).DSN()
		}
		return filepath.Join(t.TempDir(), "mcpgate.db")
	}
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run("token create, list and revoke ("+kind+")", func(t *testing.T) {
			db := storeOf(t, kind)
			stdout, stderr, err := cliRun(t, bin, "token", "create", "--name", "ci", "--role", "editor", "--expires", "1h", "--store", db)
			if err != nil {
				t.Fatalf("token create: %v\n%s", err, stderr)
			}
			if !regexp.MustCompile(`^mcpg_[A-Za-z0-9_-]{43}\n$`).MatchString(stdout) {
				t.Fatalf("token create printed %q on stdout, want exactly one line: the token", stdout)
			}
			secret := strings.TrimSpace(stdout)
			id := cliTokenIDRE.FindString(stderr)
			if id == "" || strings.Contains(stderr, secret) {
				t.Fatalf("token create's stderr %q: want the token's id, and never the token", stderr)
			}

			stdout, stderr, err = cliRun(t, bin, "token", "create", "--name", "x", "--role", "boss", "--store", db)
			if err == nil || !strings.Contains(stderr, "boss") || cliTokenRE.MatchString(stdout) {
				t.Errorf("token create --role boss: err %v, stdout %q, stderr %q; want a failure naming the role", err, stdout, stderr)
			}

			list := func() string {
				stdout, stderr, err := cliRun(t, bin, "token", "list", "--store", db)
				if err != nil {
					t.Fatalf("token list: %v\n%s", err, stderr)
				}
				if strings.Contains(stdout, secret) || strings.Contains(stdout, "mcpg_") || strings.Contains(stderr, secret) {
					t.Errorf("token list shows a secret:\n%s", stdout)
				}
				return stdout
			}
			out := list()
			row := cliRow(out, id)
			if row == "" || !strings.Contains(row, " ci ") || !strings.Contains(row, " editor ") || !strings.Contains(row, "active") {
				t.Errorf("token list:\n%s\nwant a row with %s, ci, editor, active", out, id)
			}
			if strings.Count(out, "tok_") != 1 {
				t.Errorf("token list:\n%s\nwant one token (the refused create made none)", out)
			}

			stdout, stderr, err = cliRun(t, bin, "token", "revoke", id, "--store", db)
			if err != nil || !strings.Contains(stdout, id) {
				t.Fatalf("token revoke: %v, stdout %q, stderr %q", err, stdout, stderr)
			}
			if row := cliRow(list(), id); !strings.Contains(row, "revoked") {
				t.Errorf("after revoke, the token's row is %q, want revoked", row)
			}
			if _, stderr, err := cliRun(t, bin, "token", "revoke", "tok_nosuchtoken", "--store", db); err == nil {
				t.Errorf("revoking an unknown id succeeded; stderr %q", stderr)
			}
		})

		t.Run("serve prints a first admin token once, and it works ("+kind+")", func(t *testing.T) {
			db := storeOf(t, kind)
			p := cliStart(t, bin, "serve", "--listen", "127.0.0.1:0", "--store", db)
			printed := p.waitLine(t, "the connect command", func(l string) bool { return strings.HasPrefix(l, "connect:") })
			connect := printed[len(printed)-1]
			url := cliMCPURLRE.FindString(connect)
			token := cliTokenRE.FindString(connect)
			if url == "" || token == "" {
				t.Fatalf("connect line %q names no URL or no token", connect)
			}
			if shown := cliTokenRE.FindAllString(strings.Join(printed, "\n"), -1); len(shown) != 2 || shown[0] != token {
				t.Errorf("first run printed tokens %v, want the one token, shown and in the connect command", shown)
			}
			id := cliTokenIDRE.FindString(strings.Join(printed, "\n"))

			if resp, body := cliPost(t, url, "", "", cliInitialize); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("initialize without a token: %d %s, want 401", resp.StatusCode, body)
			}
			resp, body := cliPost(t, url, token, "", cliInitialize)
			session := resp.Header.Get("Mcp-Session-Id")
			if resp.StatusCode != http.StatusOK || session == "" {
				t.Fatalf("initialize: %d %s (session %q)", resp.StatusCode, body, session)
			}
			if resp, body := cliPost(t, url, token, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
				t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, body)
			}
			resp, body = cliPost(t, url, token, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}`)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, "This is a simple text response for testing.") {
				t.Fatalf("tools/call test_simple_text: %d %s", resp.StatusCode, body)
			}
			for _, shown := range cliTokenRE.FindAllString(strings.Join(p.stop(t), "\n"), -1) {
				if shown != token {
					t.Errorf("serve printed a second token %s", shown)
				}
			}

			stdout, stderr, err := cliRun(t, bin, "audit", "tail", "-n", "5", "--store", db)
			if err != nil {
				t.Fatalf("audit tail: %v\n%s", err, stderr)
			}
			row := cliRow(stdout, "test_simple_text")
			if !strings.Contains(row, " ok ") || !strings.Contains(row, id) || !strings.Contains(row, " admin ") {
				t.Errorf("audit tail:\n%s\nwant test_simple_text by %s (admin) with outcome ok", stdout, id)
			}
			if strings.Contains(stdout, token) {
				t.Error("audit tail shows the token")
			}

			// A second run on the same store creates and prints no token.
			p = cliStart(t, bin, "serve", "--listen", "127.0.0.1:0", "--store", db)
			printed = p.waitLine(t, "the token count", func(l string) bool { return strings.Contains(l, "service token(s)") })
			printed = append(printed, p.stop(t)...)
			if all := strings.Join(printed, "\n"); cliTokenRE.MatchString(all) || strings.Contains(all, "created an admin") {
				t.Errorf("second run printed a new token:\n%s", all)
			}
			// ... but says how to get in: connect lines with a placeholder,
			// and the command that mints a new admin token for this store.
			p = cliStart(t, bin, "serve", "--listen", "127.0.0.1:0", "--store", db)
			printed = p.waitLine(t, "the inspect line", func(l string) bool { return strings.HasPrefix(l, "inspect:") })
			printed = append(printed, p.stop(t)...)
			all := strings.Join(printed, "\n")
			for _, want := range []string{"never their secrets", "new admin token:  mcpgate token create --name admin --role admin --store ",
				"connect:  claude mcp add --transport http mcpgate http://127.0.0.1:", `"Authorization: Bearer $MCPGATE_TOKEN"`} {
				if !strings.Contains(all, want) {
					t.Errorf("a later run's output lacks %q:\n%s", want, all)
				}
			}
			// The printed command works as pasted into a shell.
			_, mint, _ := strings.Cut(all, "new admin token:  mcpgate ")
			mint, _, _ = strings.Cut(mint, "\n")
			sh := exec.Command("sh", "-c", "\"$MCPGATE_BIN\" "+mint)
			sh.Env = append(cliEnv(t), "MCPGATE_BIN="+bin)
			if out, err := sh.Output(); err != nil || !cliTokenRE.Match(out) {
				t.Errorf("the printed mint command %q: %v, printed %q", mint, err, out)
			}
			stdout, _, err = cliRun(t, bin, "token", "list", "--store", db)
			if err != nil || strings.Count(stdout, "tok_") != 2 || strings.Count(stdout, "first-run admin") != 1 {
				t.Errorf("after three runs and the printed mint command, token list (%v):\n%s\nwant the one first-run token and the minted one", err, stdout)
			}
		})
	}

	t.Run("commands that read or revoke refuse a store that does not exist, and create nothing", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "typo", "mcpgte.db")
		for _, args := range [][]string{{"token", "list"}, {"audit", "tail"}, {"token", "revoke", "tok_x"}} {
			stdout, stderr, err := cliRun(t, bin, append(args, "--store", missing)...)
			if err == nil || !strings.Contains(stderr, "no store at "+missing) {
				t.Errorf("%v on a missing store: err %v, stdout %q, stderr %q", args, err, stdout, stderr)
			}
		}
		if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused commands created %s (%v)", filepath.Dir(missing), err)
		}
	})

	t.Run("serve --no-auth refuses a non-loopback address", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "mcpgate.db")
		stdout, stderr, err := cliRun(t, bin, "serve", "--no-auth", "--listen", "0.0.0.0:0", "--store", db)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("serve --no-auth on 0.0.0.0: %v, want a non-zero exit", err)
		}
		if !strings.Contains(stderr, "loopback") {
			t.Errorf("stderr %q does not mention loopback", stderr)
		}
		if strings.Contains(stdout, "serving MCP") {
			t.Errorf("stdout %q: it announced serving", stdout)
		}
	})
}

const cliInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}`

// cliRow returns the line of a table that contains s, padded with spaces
// so that a column can be matched as " word ".
func cliRow(table, s string) string {
	for line := range strings.Lines(table) {
		if strings.Contains(line, s) {
			return " " + strings.Join(strings.Fields(line), " ") + " "
		}
	}
	return ""
}
