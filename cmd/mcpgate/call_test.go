// call_test.go runs `mcpgate call` from the built binary against `mcpgate
// proxy` in front of `mcpgate fixture`, as a person or a script would: the
// answer's JSON on stdout, the exit status saying what kind of answer it
// was, secrets fed from a file and printed nowhere.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/wire"
)

var proxyAddrRE = regexp.MustCompile(`wss?://127\.0\.0\.1:\d+`)

// startProxy runs `mcpgate proxy` on a free loopback port and returns its
// base URL and its stderr (debug logs included).
func startProxy(t *testing.T, bin string, env []string, args ...string) (string, *testkit.Output) {
	t.Helper()
	// The pairs are off unless args turn them on: tests run many proxies.
	cmd := exec.Command(bin, append([]string{"proxy", "--listen", "127.0.0.1:0", "--verbose", "--postgres-listen=", "--daemon-listen="}, args...)...)
	cmd.Env = append(cliEnv(t), env...)
	stderr := testkit.Start(t, cmd) // interrupted, the proxy stops what it started
	return stderr.Await(t, proxyAddrRE), stderr
}

// exitCode is how a finished run exited.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// runCall runs `mcpgate call` and checks its exit status.
func runCall(t *testing.T, bin string, wantExit int, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := cliRun(t, bin, append([]string{"call"}, args...)...)
	if got := exitCode(t, err); got != wantExit {
		t.Fatalf("mcpgate call %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, wantExit, stdout, stderr)
	}
	return stdout, stderr
}

// oneJSONLine checks stdout is exactly one line of JSON and returns it.
func oneJSONLine(t *testing.T, stdout string) string {
	t.Helper()
	line, rest, _ := strings.Cut(stdout, "\n")
	if rest != "" || !json.Valid([]byte(line)) {
		t.Fatalf("stdout is not one line of JSON: %q", stdout)
	}
	return line
}

func TestCall(t *testing.T) {
	bin := testkit.Mcpgate(t)
	upstream := startFixture(t, bin) + "/mcp"
	noInfo := filepath.Join(t.TempDir(), "none.md")
	// Each framed call takes a proxy's one framed connection: a fresh proxy each.
	freshProxy := func(t *testing.T, args ...string) string {
		base, _ := startProxy(t, bin, nil, append([]string{"--upstream", upstream, "--info", noInfo}, args...)...)
		return base
	}

	for _, form := range []string{"--framed", "--per-path"} {
		t.Run(form, func(t *testing.T) {
			out, _ := runCall(t, bin, exitAnswered, freshProxy(t), "tools/list", form)
			if !strings.Contains(oneJSONLine(t, out), `"test_simple_text"`) {
				t.Errorf("tools/list printed %s", out)
			}
			out, _ = runCall(t, bin, exitAnswered, freshProxy(t), "tools/call", "test_simple_text", form)
			// The proxy speaks 2026-07-28 to the fixture: its answer, byte for byte.
			if got := oneJSONLine(t, out); got != `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpgate-fixture","version":"1.0.0"}},`+
				`"content":[{"type":"text","text":"This is a simple text response for testing."}]}` {
				t.Errorf("tools/call printed %s", got)
			}
			out, _ = runCall(t, bin, exitAnswered, freshProxy(t), "resources/read", "test://static-text", form)
			if !strings.Contains(out, "This is the content of the static text resource.") {
				t.Errorf("resources/read printed %s", out)
			}
			// Bad arguments: the upstream's -32602 ErrorData on stdout, exit 1.
			out, _ = runCall(t, bin, exitRefused, freshProxy(t), "tools/call", "test_sampling", `{"prompt": 7}`, form)
			var e struct {
				Code    int
				Message string
				Data    json.RawMessage
			}
			if err := json.Unmarshal([]byte(oneJSONLine(t, out)), &e); err != nil || e.Code != -32602 || e.Message == "" {
				t.Errorf("bad arguments printed %s; want the -32602 ErrorData", out)
			}
		})
	}

	t.Run("notifications, one JSON line each", func(t *testing.T) {
		base, logs := startProxy(t, bin, nil, "--upstream", upstream, "--info", noInfo)
		stream := cliStart(t, bin, "call", base, "notifications", "--per-path", "--count", "2")
		logs.Await(t, regexp.MustCompile(`notification stream open`))
		runCall(t, bin, exitAnswered, base, "tools/call", "test_tool_with_logging", "--per-path")
		for _, line := range stream.waitLine(t, "two notifications", func(s string) bool { return strings.Contains(s, "Tool processing data") }) {
			var n struct{ Method string }
			if err := json.Unmarshal([]byte(line), &n); err != nil || n.Method != "notifications/message" {
				t.Errorf("notification line %q", line)
			}
		}
		<-stream.done
		if stream.err != nil {
			t.Errorf("notifications --count 2 exited with %v", stream.err)
		}
	})

	t.Run("any other request goes on tag 9", func(t *testing.T) {
		out, _ := runCall(t, bin, exitAnswered, freshProxy(t), "prompts/get", `{"name":"test_simple_prompt"}`)
		if !strings.Contains(oneJSONLine(t, out), `"messages"`) {
			t.Errorf("prompts/get printed %s", out)
		}
		out, _ = runCall(t, bin, exitAnswered, freshProxy(t), "resources/templates/list")
		if !strings.Contains(oneJSONLine(t, out), `"uriTemplate"`) {
			t.Errorf("resources/templates/list printed %s", out)
		}
		out, _ = runCall(t, bin, exitRefused, freshProxy(t), "no/such/method")
		if !strings.Contains(oneJSONLine(t, out), `-32601`) {
			t.Errorf("an unknown method printed %s, want the server's -32601", out)
		}
	})

	t.Run("info prints the document", func(t *testing.T) {
		doc := filepath.Join(t.TempDir(), "DIVERGE.md")
		writeText(t, doc, "---\ntitle: Fixture\n---\n# The fixture\n")
		out, _ := runCall(t, bin, exitAnswered, freshProxy(t, "--info", doc), "info")
		if got := oneJSONLine(t, out); got != `{"title":"Fixture","readme":"# The fixture\n"}` {
			t.Errorf("info printed %s", got)
		}
		_, stderr := runCall(t, bin, exitRefused, freshProxy(t), "info")
		if !strings.Contains(stderr, "no DIVERGE.md") {
			t.Errorf("info without a DIVERGE.md said %q", stderr)
		}
		runCall(t, bin, exitNoAnswer, freshProxy(t), "info", "--per-path")
	})

	t.Run("secrets @file open the gate and are printed nowhere", func(t *testing.T) {
		const secret = "sk-cli-4e1b7a90c2"
		dir := t.TempDir()
		doc, values := filepath.Join(dir, "DIVERGE.md"), filepath.Join(dir, "values.json")
		writeText(t, doc, "---\nsecrets: [API_KEY]\n---\n")
		writeText(t, values, `{"API_KEY": "`+secret+`"}`)
		base, logs := startProxy(t, bin, nil, "--upstream", upstream, "--info", doc)

		held := cliStart(t, bin, "call", base, "tools/list", "--per-path")
		logs.Await(t, regexp.MustCompile(`exchange waits for the secrets`))
		select {
		case <-held.done:
			t.Fatal("a call was answered before the secrets were fed")
		default:
		}
		out, stderr := runCall(t, bin, exitAnswered, base, "secrets", "@"+values)
		if out != "" || !strings.Contains(stderr, "secrets fed (1 values)") {
			t.Errorf("secrets printed %q on stdout and %q on stderr", out, stderr)
		}
		held.waitLine(t, "the held tools/list", func(s string) bool { return strings.Contains(s, `"test_simple_text"`) })
		for what, text := range map[string]string{"call's stdout": out, "call's stderr": stderr, "the proxy's log": logs.String()} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds the secret value", what)
			}
		}
		_, stderr = runCall(t, bin, exitNoAnswer, base, "secrets", `{"API_KEY": 7, "B": "`+secret+`"}`)
		if strings.Contains(stderr, secret) {
			t.Errorf("a secrets usage error quotes a value: %s", stderr)
		}
	})

	t.Run("a refused begin prints the refusal and exits 1", func(t *testing.T) {
		const refusal = `{"kind":"arguments","error":"region is required"}`
		program := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if r.URL.Path != "/register" || string(body) != `{"arguments":{"region":null}}` {
				http.Error(w, "unexpected "+r.URL.Path+" "+string(body), http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, refusal)
		}))
		t.Cleanup(program.Close)
		port := program.URL[strings.LastIndex(program.URL, ":")+1:]
		base, _ := startProxy(t, bin, []string{"PORT=" + port}, "--info", noInfo) // the container contract
		out, stderr := runCall(t, bin, exitRefused, base, "tools/list", "--arguments", `{"region":null}`)
		if oneJSONLine(t, out) != refusal || !strings.Contains(stderr, "begin was refused") {
			t.Errorf("refused begin printed %q, %q", out, stderr)
		}
	})

	t.Run("a bare finish exits 2", func(t *testing.T) {
		notServing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ws, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			_ = wire.Serve(r.Context(), ws, wire.HandlerFunc(func(ctx context.Context, resp *wire.Responder, _ []byte) {
				if !resp.IsChannel() {
					_ = resp.Respond(wire.BeginAnswer{}.Append(nil)) // Begun
					<-ctx.Done()
				} // a channel: returning unanswered is a bare finish
			}), nil)
		}))
		t.Cleanup(notServing.Close)
		_, stderr := runCall(t, bin, exitNotServed, "ws"+strings.TrimPrefix(notServing.URL, "http"), "tools/list")
		if !strings.Contains(stderr, "bare finish") {
			t.Errorf("a bare finish said %q", stderr)
		}
	})

	t.Run("usage errors print nothing on stdout and exit 3", func(t *testing.T) {
		const base = "ws://127.0.0.1:1" // nothing is dialled
		for _, args := range [][]string{
			{base},
			{base, "tools/call"},
			{base, "tools/call", "x", "[1]"},
			{base, "tools/list", "{"},
			{base, "nomethod"},
			{base, "initialize"},
			{base, "notifications/cancelled"},
			{base, "prompts/get", "{"},
			{base, "prompts/list", "--per-path"},
			{base, "secrets", "@" + filepath.Join(t.TempDir(), "missing.json"), "--framed"},
			{base, "tools/list", "--per-path", "--arguments", "{}"},
			{"ftp://127.0.0.1:1", "tools/list"},
			{"ws://127.0.0.1:1/tool/list-tools", "tools/list"},
		} {
			if out, _ := runCall(t, bin, exitNoAnswer, args...); out != "" {
				t.Errorf("%v printed %q on stdout", args, out)
			}
		}
	})
}

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
