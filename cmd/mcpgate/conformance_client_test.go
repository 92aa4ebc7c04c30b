// conformance_client_test.go runs the official suite's client mode against
// the gateway's backend client. `conformance client --command CMD` starts
// a mock server of its own and runs CMD with the mock's URL; here CMD is
// this test binary as a small driver (TestMain, ccDriverEnv). The driver
// puts the real programs in front of the mock — `mcpgate serve --backend
// x=http:URL`, or `mcpgate proxy --upstream URL` with serve relaying the
// proxy — and, as a plain MCP client of the gateway, makes the calls the
// scenario expects. What the mock grades is what the gateway (or the
// proxy) sent it: the initialize handshake, the tool call's arguments,
// the SSE retry wait and Last-Event-ID, the elicitation defaults, the
// schema kept verbatim.
//
// Every scenario of the 2025-11-25 requirement set that needs no OAuth
// runs, with both pinned suites (0.1.16 and 0.2.0-alpha.12), along both
// paths; the mock servers are kept on loopback by the reference server's
// preload.
//
// Every identifier here starts with "cc" so that it cannot collide with
// the other tests of this package.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

const (
	// ccDriverEnv makes the test binary the driver: "http" relays the mock
	// as an http backend, "proxy" through `mcpgate proxy`.
	ccDriverEnv = "MCPGATE_CONFORMANCE_DRIVER"
	ccBinEnv    = "MCPGATE_CONFORMANCE_BIN" // the mcpgate binary the driver runs
)

func TestMain(m *testing.M) {
	if path := os.Getenv(ccDriverEnv); path != "" {
		if err := ccDrive(path, os.Getenv(ccBinEnv), os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO")); err != nil {
			fmt.Fprintln(os.Stderr, "driver:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ccScenarios are the client scenarios run, each with the checks that must
// succeed (a scenario whose client never calls records no check at all,
// and the suite counts that as a pass: the checks are named here).
var ccScenarios = []struct {
	name   string
	next   bool // only in 0.2.0-alpha.12
	checks []string
}{
	{name: "initialize", checks: []string{"mcp-client-initialization"}},
	{name: "tools_call", checks: []string{"tool-add-numbers"}},
	{name: "elicitation-sep1034-client-defaults", checks: []string{
		"client-elicitation-sep1034-string-default", "client-elicitation-sep1034-integer-default",
		"client-elicitation-sep1034-number-default", "client-elicitation-sep1034-enum-default",
		"client-elicitation-sep1034-boolean-default"}},
	{name: "sse-retry", checks: []string{"client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"}},
	// Not scored for 2025-11-25 (added to the suite after its anchor), but
	// a relay must keep a tool's schema as it is.
	{name: "json-schema-2020-12-preservation", next: true, checks: []string{
		"json-schema-2020-12-client-tool-found", "json-schema-2020-12-client-echo-completed",
		"json-schema-2020-12-client-$schema-preserved", "json-schema-2020-12-client-$defs-preserved",
		"json-schema-2020-12-client-additionalProperties-preserved"}},
}

// ccPathName says what stands between the driver and the mock.
var ccPathName = map[string]string{"http": "mcpgate serve (http backend)", "proxy": "mcpgate proxy and serve (proxy backend)"}

type ccCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

var ccPassed = regexp.MustCompile(`(?m)^Passed: (\d+)/(\d+), (\d+) failed`)

func TestConformanceClientScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("18 runs of the conformance suite's client mode")
	}
	p := peers.Require(t)
	ref := peers.RequireRefServer(t) // its loopback preload keeps the mocks on 127.0.0.1
	bin := buildBinary(t)
	suites := []struct {
		name, entry string
		next        bool
	}{{"0.1.16", p.Conformance, false}, {"0.2.0-alpha.12", p.ConformanceNext, true}}
	for _, suite := range suites {
		for _, path := range []string{"http", "proxy"} {
			for _, sc := range ccScenarios {
				if sc.next && !suite.next {
					continue
				}
				t.Run(suite.name+"/"+path+"/"+sc.name, func(t *testing.T) {
					t.Parallel()
					checks, out, exitErr := ccRun(t, p.Node22, filepath.Join(ref.Dir, "loopback.cjs"), suite.entry, bin, path, sc.name)
					if exitErr != nil {
						t.Errorf("the suite exited with %v", exitErr)
					}
					byID := map[string]string{}
					for _, c := range checks {
						if c.Status == "FAILURE" || c.Status == "WARNING" {
							t.Errorf("%s %s: %s", c.ID, c.Status, c.ErrorMessage)
						}
						if byID[c.ID] == "" || c.Status != "SUCCESS" {
							byID[c.ID] = c.Status
						}
					}
					for _, id := range sc.checks {
						if byID[id] != "SUCCESS" {
							t.Errorf("check %s: %q, want SUCCESS", id, byID[id])
						}
					}
					if t.Failed() {
						t.Logf("suite output:\n%s", out)
					} else if m := ccPassed.FindStringSubmatch(out); m != nil {
						peers.Score(t, "%s client %s, the mock through %s: %s/%s passed, %s failed", suite.name, sc.name, ccPathName[path], m[1], m[2], m[3])
					}
				})
			}
		}
	}
}

// ccRun runs one client scenario with the driver as the client and returns
// the checks the suite recorded, what it printed and how it exited.
func ccRun(t *testing.T, node, preload, entry, bin, path, scenario string) ([]ccCheck, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, node, "--require", preload, entry, "client",
		"--command", os.Args[0], "--scenario", scenario, "--timeout", "60000", "-o", dir)
	cmd.Env = append(os.Environ(), ccDriverEnv+"="+path, ccBinEnv+"="+bin)
	out, exitErr := cmd.CombinedOutput()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if len(files) != 1 {
		t.Fatalf("want one checks.json, found %v; output:\n%s", files, out)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []ccCheck
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatalf("checks.json: %v", err)
	}
	if log, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "stderr.txt")); err == nil && len(log) > 0 {
		out = append(out, "\n--- the driver's stderr:\n"...)
		out = append(out, log...)
	}
	return checks, string(out), exitErr
}

// ccDrive is the driver: it starts the gateway (and the proxy) in front of
// the mock at mockURL, makes the scenario's calls through it, and stops
// what it started.
func ccDrive(path, bin, mockURL, scenario string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	tmp, err := os.MkdirTemp("", "mcpgate-conformance-driver-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	backend := "x=http:" + mockURL
	if path == "proxy" {
		proxy, err := ccStart(ctx, bin, nil, "proxy", "--listen", "127.0.0.1:0", "--upstream", mockURL)
		if err != nil {
			return err
		}
		defer proxy.stop()
		line, err := proxy.await(regexp.MustCompile(`serving the wire at (ws://\S+?)/? `), proxy.stderr)
		if err != nil {
			return err
		}
		backend = "x=proxy:" + line[1]
	}
	serve, err := ccStart(ctx, bin, []string{"XDG_DATA_HOME=" + tmp}, "serve", "--listen", "127.0.0.1:0", "--backend", backend)
	if err != nil {
		return err
	}
	defer serve.stop()
	at, err := serve.await(regexp.MustCompile(`serving MCP at (http://\S+/mcp)`), serve.stdout)
	if err != nil {
		return err
	}
	tok, err := serve.await(regexp.MustCompile(`^\s+(mcpg_\S+)$`), serve.stdout)
	if err != nil {
		return err
	}
	gwURL, token := at[1], tok[1]
	if err := ccAwaitReady(ctx, strings.TrimSuffix(gwURL, "/mcp")+"/readyz"); err != nil {
		return err
	}

	conn, err := mcphttp.DialStreamable(ctx, gwURL, mcphttp.ClientOptions{Header: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		return err
	}
	client := mcp.NewClient(conn, mcp.ClientOptions{
		Info:         mcp.Implementation{Name: "mcpgate-conformance-driver", Version: "1"},
		Capabilities: json.RawMessage(`{"elicitation":{}}`),
		OnRequest: func(_ context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
			if m.Method == "elicitation/create" {
				// A user who accepts without touching a field: the
				// gateway fills in the schema's defaults.
				return json.RawMessage(`{"action":"accept","content":{}}`), nil
			}
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, m.Method, nil)
		},
	})
	defer client.Close()
	if _, err := client.Initialize(ctx); err != nil {
		return fmt.Errorf("initialize through the gateway: %w", err)
	}
	res, err := client.Call(ctx, "tools/list", json.RawMessage(`{}`))
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	tool := func(suffix string) (name string, schema json.RawMessage, err error) {
		for _, t := range list.Tools {
			if strings.HasSuffix(t.Name, suffix) {
				return t.Name, t.InputSchema, nil
			}
		}
		return "", nil, fmt.Errorf("the gateway lists no tool *%s: %s", suffix, res)
	}
	call := func(suffix, args, want string) error {
		name, _, err := tool(suffix)
		if err != nil {
			return err
		}
		params, _ := json.Marshal(map[string]any{"name": name, "arguments": json.RawMessage(args)})
		res, err := client.Call(ctx, "tools/call", params)
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", name, err)
		}
		if !strings.Contains(string(res), want) {
			return fmt.Errorf("tools/call %s answered %s, want %q in it", name, res, want)
		}
		return nil
	}

	switch scenario {
	case "initialize":
		return nil // the handshake and the listing are the scenario
	case "tools_call":
		return call("add_numbers", `{"a":2,"b":3}`, "is 5")
	case "elicitation-sep1034-client-defaults":
		return call("test_client_elicitation_defaults", `{}`, `"content"`)
	case "sse-retry":
		return call("test_reconnection", `{}`, "Reconnection test completed successfully")
	case "json-schema-2020-12-preservation":
		_, schema, err := tool("json_schema_2020_12_tool")
		if err != nil {
			return err
		}
		return call("json_schema_echo", `{"schema":`+string(schema)+`}`, "echoed")
	}
	return fmt.Errorf("no calls known for scenario %q", scenario)
}

// ccProc is a program the driver started, with its output read line by
// line.
type ccProc struct {
	cmd            *exec.Cmd
	stdout, stderr chan string
	done           chan struct{}
}

func ccStart(ctx context.Context, bin string, env []string, args ...string) (*ccProc, error) {
	p := &ccProc{cmd: exec.Command(bin, args...), stdout: make(chan string, 64), stderr: make(chan string, 64), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errOut, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	copyLines := func(r io.Reader, to chan string) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			fmt.Fprintf(os.Stderr, "[%s] %s\n", args[0], sc.Text()) // kept in the suite's stderr.txt
			select {
			case to <- sc.Text():
			default: // nobody waits for more
			}
		}
	}
	go func() {
		done := make(chan struct{})
		go func() { copyLines(errOut, p.stderr); close(done) }()
		copyLines(out, p.stdout)
		<-done
		_ = p.cmd.Wait()
		close(p.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = p.cmd.Process.Kill()
		case <-p.done:
		}
	}()
	return p, nil
}

// await reads lines until one matches re and returns its submatches.
func (p *ccProc) await(re *regexp.Regexp, lines chan string) ([]string, error) {
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case l := <-lines:
			if m := re.FindStringSubmatch(l); m != nil {
				return m, nil
			}
		case <-p.done:
			return nil, fmt.Errorf("%s exited before printing %s", p.cmd.Args[1], re)
		case <-timeout.C:
			return nil, fmt.Errorf("%s printed no %s in 30s", p.cmd.Args[1], re)
		}
	}
}

// stop interrupts the program and waits for it (killing it after 10s).
func (p *ccProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// ccAwaitReady polls the gateway's /readyz until its backend is up.
func ccAwaitReady(ctx context.Context, url string) error {
	for {
		resp, err := http.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.New("the gateway's backend never came up (/readyz)")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
