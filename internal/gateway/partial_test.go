// partial_test.go pins partial failure end to end: three real backends
// (a stdio process, a Streamable HTTP server process, and the fixture over
// Streamable HTTP), one client session held throughout. One backend's
// process is killed while a call to it is in flight: that call fails with
// -32603 and data.backend; the client is told the lists changed and the
// dead backend's entries are gone from them; a call to one of them answers
// -32603 with data.backend (not "unknown"); the other two keep answering;
// /readyz shows it down without a secret; and once it is back, its entries
// and calls return in the same session.

package gateway_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Secrets configured for the backends; /readyz must never show them.
const (
	pfEnvSecret    = "pf-env-secret-4c1d"
	pfHeaderSecret = "pf-header-secret-9e7a"
)

// pfHTTPChild is a backend server process reached over Streamable HTTP.
type pfHTTPChild struct {
	cmd  *exec.Cmd
	addr string
	once sync.Once
}

// pfStartHTTPChild starts pfServer(name) in a process listening on addr
// ("127.0.0.1:0" for any port); it is killed when the test ends.
func pfStartHTTPChild(t *testing.T, name, addr string) *pfHTTPChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], name, addr)
	cmd.Env = append(os.Environ(), bkChildEnv+"="+pfRoleHTTP)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // closed with the test: the child then exits
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &pfHTTPChild{cmd: cmd}
	t.Cleanup(func() { _ = stdin.Close(); c.kill() })
	if c.addr, err = pfReadListening(stdout); err != nil {
		t.Fatal(err)
	}
	return c
}

// kill ends the process at once (SIGKILL) and reaps it.
func (c *pfHTTPChild) kill() {
	c.once.Do(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
}

// pfClient is one MCP session with the gateway that records what the
// gateway tells it unasked.
type pfClient struct {
	*mcp.Client
	conn        *mcphttp.StreamableConn
	toolsChange chan struct{}
	progress    chan json.RawMessage
}

func pfConnect(t *testing.T, base, auth string) *pfClient {
	t.Helper()
	o := mcphttp.ClientOptions{Header: http.Header{}}
	if auth != "" {
		o.Header.Set("Authorization", auth)
	}
	conn, err := mcphttp.DialStreamable(testkit.Context(t), base+"/mcp", o)
	if err != nil {
		t.Fatal(err)
	}
	c := &pfClient{conn: conn, toolsChange: make(chan struct{}, 64), progress: make(chan json.RawMessage, 64)}
	c.Client = mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "pf", Version: "1"},
		OnNotification: func(m *jsonrpc.Message) {
			switch m.Method {
			case "notifications/tools/list_changed":
				select {
				case c.toolsChange <- struct{}{}:
				default:
				}
			case "notifications/progress":
				c.progress <- m.Params
			}
		}})
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	return c
}

// tools lists the tool names the session sees.
func (c *pfClient) tools(t *testing.T) []string {
	t.Helper()
	res, err := c.Call(testkit.Context(t), "tools/list", nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	return gwNames(t, res, "tools", "name")
}

// drain forgets the list_changed notices received so far.
func (c *pfClient) drain() {
	for {
		select {
		case <-c.toolsChange:
		default:
			return
		}
	}
}

// waitToolsChanged waits, bounded, for a tools list_changed notice.
func (c *pfClient) waitToolsChanged(t *testing.T, why string) {
	t.Helper()
	select {
	case <-c.toolsChange:
	case <-time.After(20 * time.Second):
		t.Fatalf("no notifications/tools/list_changed after %s", why)
	}
}

// pfText returns the text of a tools/call result.
func pfResultText(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("tool result %s", res)
	}
	return r.Content[0].Text
}

// pfWantUnavailable fails unless err is -32603 "backend X is unavailable"
// naming backend in data, and nothing else.
func pfWantUnavailable(t *testing.T, what string, err error, backend string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		t.Fatalf("%s: got %v, want JSON-RPC -32603 with data.backend %q", what, err, backend)
	}
	got, _ := jsonrpc.LookupString(je.Data, "backend")
	if je.Code != jsonrpc.CodeInternalError || got != backend {
		t.Fatalf("%s: got %d %q data %s, want -32603 with data.backend %q", what, je.Code, je.Message, je.Data, backend)
	}
	// Why (a dial error, an internal address, a process's exit) is the
	// log's: the caller is told which backend, and nothing more.
	if want := "backend " + backend + " is unavailable"; je.Message != want || len(je.Data) != len(`{"backend":""}`)+len(backend) {
		t.Fatalf("%s: got %q data %s, want %q and data naming only the backend", what, je.Message, je.Data, want)
	}
}

// pfCall makes one call and returns its raw result or error.
func pfCall(t *testing.T, c *pfClient, method, params string) (json.RawMessage, error) {
	t.Helper()
	return c.Call(testkit.Context(t), method, json.RawMessage(params))
}

func TestPartialFailureOneOfThreeBackendsKilledMidSession(t *testing.T) {
	for _, victim := range []string{"alpha", "beta"} {
		t.Run(victim+" killed", func(t *testing.T) { pfKillOneOfThree(t, victim) })
	}
}

func pfKillOneOfThree(t *testing.T, victim string) {
	testkit.LeakCheck(t)
	flag := filepath.Join(t.TempDir(), "alpha-down")
	t.Setenv("PF_ROLE", pfRoleStdio)
	t.Setenv("PF_ENV_SECRET", pfEnvSecret)
	t.Setenv("PF_BEARER", "Bearer "+pfHeaderSecret)
	beta := pfStartHTTPChild(t, "beta", "127.0.0.1:0")
	gammaURL, _ := bkFixtureHTTP(t, nil)
	base, _ := bkGateway(t, fmt.Sprintf(`backends:
  - name: alpha
    kind: stdio
    command: [%q, alpha, %q]
    env_from: {%s: PF_ROLE, PF_SECRET: PF_ENV_SECRET}
  - name: beta
    kind: http
    url: http://%s/mcp
    headers_from: {Authorization: PF_BEARER}
  - name: gamma
    kind: http
    url: %q
`, os.Args[0], flag, bkChildEnv, beta.addr, gammaURL))
	bkWaitReady(t, base, http.StatusOK)

	c := pfConnect(t, base, "")
	session := c.conn.SessionID()
	all := c.tools(t)
	for _, name := range []string{"alpha__hello", "beta__hello", "gamma__test_simple_text"} {
		if !slices.Contains(all, name) {
			t.Fatalf("tools/list %v lacks %s", all, name)
		}
	}
	others := map[string]string{"alpha": "alpha__hello", "beta": "beta__hello", "gamma": "gamma__test_simple_text"}
	delete(others, victim)
	othersServe := func(when string) {
		t.Helper()
		for name, tool := range others {
			if _, err := pfCall(t, c, "tools/call", `{"name":"`+tool+`","arguments":{}}`); err != nil {
				t.Fatalf("%s: %s's %s: %v", when, name, tool, err)
			}
		}
	}
	othersServe("before the kill")

	// The victim dies while a call to it is in flight; it stays down (the
	// stdio one refuses to start again, the HTTP one is not restarted)
	// until the test brings it back.
	kill := func() {
		if victim == "beta" {
			beta.kill()
			return
		}
		res, err := pfCall(t, c, "tools/call", `{"name":"alpha__pid","arguments":{}}`)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(pfResultText(t, res))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(flag, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	c.drain()
	inflight := make(chan error, 1)
	go func() {
		_, err := pfCall(t, c, "tools/call", `{"name":"`+victim+`__hang","arguments":{},"_meta":{"progressToken":"pf"}}`)
		inflight <- err
	}()
	select {
	case <-c.progress: // the call is in the backend
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight never reached the backend")
	}
	kill()
	pfWantUnavailable(t, "the call in flight when the backend died", <-inflight, victim)

	// Its entries leave the lists, and the client is told.
	c.waitToolsChanged(t, "the backend died")
	testkit.WaitFor(t, victim+"'s tools gone from tools/list", func() bool {
		return !slices.ContainsFunc(c.tools(t), func(n string) bool { return strings.HasPrefix(n, victim+"__") })
	})
	// The lists change one after another (tools, then resources): wait
	// for the resource too rather than assume the order.
	testkit.WaitFor(t, victim+"'s resource gone from resources/list", func() bool {
		res, err := pfCall(t, c, "resources/list", "")
		if err != nil {
			t.Fatal(err)
		}
		return !slices.Contains(gwNames(t, res, "resources", "uri"), victim+"://doc")
	})

	// A call to one of them says the backend is unavailable; a name that
	// never existed is still unknown.
	for _, call := range [][2]string{
		{"tools/call", `{"name":"` + victim + `__hello","arguments":{}}`},
		{"prompts/get", `{"name":"` + victim + `__greet"}`},
		{"resources/read", `{"uri":"` + victim + `://doc"}`},
	} {
		_, err := pfCall(t, c, call[0], call[1])
		pfWantUnavailable(t, call[0]+" of the dead backend's entry", err, victim)
	}
	_, err := pfCall(t, c, "tools/call", `{"name":"`+victim+`__never","arguments":{}}`)
	if je, _ := gwRPCError(err); je == nil || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("a tool the backend never had: %v, want -32602", err)
	}

	othersServe("while " + victim + " is down")

	body, ready := bkWaitReady(t, base, http.StatusServiceUnavailable)
	for _, b := range ready.Backends {
		if up := b.Name != victim; b.Up != up {
			t.Errorf("/readyz shows %s up=%v: %s", b.Name, b.Up, body)
		}
	}
	for _, secret := range []string{pfEnvSecret, pfHeaderSecret} {
		if strings.Contains(body, secret) {
			t.Errorf("/readyz shows a secret: %s", body)
		}
	}

	// It comes back: its entries and calls return, in the same session.
	c.drain()
	if victim == "beta" {
		pfStartHTTPChild(t, "beta", beta.addr)
	} else if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	bkWaitReady(t, base, http.StatusOK)
	c.waitToolsChanged(t, "the backend came back")
	testkit.WaitFor(t, victim+"'s tools back in tools/list", func() bool {
		return slices.Contains(c.tools(t), victim+"__hello")
	})
	res, err := pfCall(t, c, "tools/call", `{"name":"`+victim+`__hello","arguments":{}}`)
	if err != nil {
		t.Fatalf("%s__hello after the restart: %v", victim, err)
	}
	if got := pfResultText(t, res); got != "hello from "+victim {
		t.Errorf("%s__hello answered %q", victim, got)
	}
	othersServe("after " + victim + " came back")
	if c.conn.SessionID() != session {
		t.Errorf("session changed from %s to %s", session, c.conn.SessionID())
	}
}

// When an HTTP backend dies mid-call and nothing else notices it (no
// pings), the client transport gives up on the broken response stream and
// answers the call itself with a -32603 of its own. The gateway does not
// pass that on as if the backend had said it: the caller gets -32603 with
// data.backend, like any call the backend could not take.
func TestACallInFlightToADeadHTTPBackendNamesTheBackend(t *testing.T) {
	testkit.LeakCheck(t)
	beta := pfStartHTTPChild(t, "beta", "127.0.0.1:0")
	base, _ := bkGatewayWith(t, "backends: [{name: beta, kind: http, url: \"http://"+beta.addr+"/mcp\"}]\n",
		backends.Options{PingInterval: -1, Backoff: bkFast.Backoff})
	bkWaitReady(t, base, http.StatusOK)
	c := pfConnect(t, base, "")
	inflight := make(chan error, 1)
	go func() {
		_, err := pfCall(t, c, "tools/call", `{"name":"beta__hang","arguments":{},"_meta":{"progressToken":1}}`)
		inflight <- err
	}()
	select {
	case <-c.progress:
	case <-time.After(20 * time.Second):
		t.Fatal("the call never reached the backend")
	}
	beta.kill()
	pfWantUnavailable(t, "the call in flight when the backend died", <-inflight, "beta")
}
