package backends_test

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// httpFixture is the fixture served over Streamable HTTP at addr ("" for
// any free port).
type httpFixture struct {
	ts *httptest.Server
	h  *mcphttp.Handler
}

func serveFixture(t *testing.T, addr string) *httpFixture {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{})
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = ln
	ts.Start()
	f := &httpFixture{ts: ts, h: h}
	t.Cleanup(f.stop)
	return f
}

// stop ends every session, then the server: the backend sees its session
// die and then nothing listening.
func (f *httpFixture) stop() {
	f.h.Close()
	f.ts.CloseClientConnections()
	f.ts.Close()
}

// An http backend's catalogue is mirrored while it is up, leaves the front
// (with list_changed) when it dies, and returns when a server is back on
// the same address.
func TestHTTPBackendLeavesTheFrontWhenDownAndReturns(t *testing.T) {
	srv := serveFixture(t, "")
	f := newFront(t)
	b := backends.New(backends.Spec{Name: "web", Kind: upstream.KindHTTP, URL: srv.ts.URL + "/mcp"}, f.Server, nil, fast)
	run(t, b)
	waitState(t, b, "up", isUp)
	if !f.has(t, "web__test_simple_text") {
		t.Fatalf("front tools %v lack web__test_simple_text", f.tools(t))
	}
	if got := f.callText(t, "web__test_simple_text"); got == "" {
		t.Fatal("empty answer through the front")
	}
	f.out.Take("")

	srv.stop()
	down := waitState(t, b, "down", isDown)
	if f.has(t, "web__test_simple_text") {
		t.Error("a dead backend's tool is still listed")
	}
	if n := f.out.Take("notifications/tools/list_changed"); n == 0 {
		t.Error("the front session got no tools/list_changed when the backend died")
	}
	// The entries left with the session. This front does not consult the
	// ledger's tombstones (mcp.Options.Unknown), so a call meanwhile finds
	// no such tool (-32602); the gateway's does (tombstone_test.go).
	m := f.call(t, "tools/call", `{"name":"web__test_simple_text","arguments":{}}`)
	if e, err := m.ErrorObject(); m.Kind() != jsonrpc.KindError || err != nil || e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("call to a dead backend: %s %s, want -32602", m.Result, m.Error)
	}

	serveFixture(t, strings.TrimPrefix(srv.ts.URL, "http://"))
	up := waitState(t, b, "up again", isUp)
	if up.Restarts <= down.Restarts {
		t.Errorf("restarts %d after coming back, %d when down", up.Restarts, down.Restarts)
	}
	if !f.has(t, "web__test_simple_text") {
		t.Error("the tool did not return with the backend")
	}
	if n := f.out.Take("notifications/tools/list_changed"); n == 0 {
		t.Error("no tools/list_changed when the backend returned")
	}
	f.callText(t, "web__test_simple_text")
}

// A stdio child that is killed is started again, and its entries return.
func TestKilledStdioBackendIsRestarted(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	f := newFront(t)
	b := backends.New(childSpec("kid", pidFile), f.Server, nil, fast)
	run(t, b)
	first := waitState(t, b, "up", isUp)
	f.callText(t, "kid__test_simple_text")

	kill(t, pidFile)
	waitState(t, b, "down", isDown)
	up := waitState(t, b, "up again", isUp)
	if up.Restarts != first.Restarts+1 {
		t.Errorf("restarts %d, want %d", up.Restarts, first.Restarts+1)
	}
	if !f.has(t, "kid__test_simple_text") {
		t.Error("the tool did not return with the restarted child")
	}
	f.callText(t, "kid__test_simple_text")
}

// kill SIGKILLs the child whose pid is in pidFile, and forgets the file.
func kill(t *testing.T, pidFile string) {
	t.Helper()
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pidFile); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// One of three backends killed: the other two keep serving, and it
// returns.
func TestOneOfThreeKilledTheOthersKeepServing(t *testing.T) {
	f := newFront(t)
	set := backends.NewSet(f.Server, fast)
	dir := t.TempDir()
	srv := serveFixture(t, "")
	for _, s := range []backends.Spec{childSpec("a", filepath.Join(dir, "a")), childSpec("b", filepath.Join(dir, "b")),
		{Name: "c", Kind: upstream.KindHTTP, URL: srv.ts.URL + "/mcp"}} {
		if err := set.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := set.Add(childSpec("a", "")); !errors.Is(err, backends.ErrDuplicateName) {
		t.Errorf("duplicate Add: %v", err)
	}
	run(t, set)
	for _, name := range []string{"a", "b", "c"} {
		waitState(t, set.Backend(name), "up", isUp)
	}
	kill(t, filepath.Join(dir, "b"))
	waitState(t, set.Backend("b"), "down", isDown)
	for _, name := range []string{"a", "c"} {
		f.callText(t, name+"__test_simple_text")
	}
	waitState(t, set.Backend("b"), "up again", isUp)
	f.callText(t, "b__test_simple_text")

	states := set.States()
	if len(states) != 3 || states[0].Name != "a" || states[1].Name != "b" || states[2].Name != "c" {
		t.Fatalf("states %+v, want a, b, c", states)
	}
	if !set.Remove("c") || f.has(t, "c__test_simple_text") {
		t.Error("a removed backend's tool is still listed")
	}
	if len(set.States()) != 2 {
		t.Errorf("states after Remove: %+v", set.States())
	}
}

// A server that quotes the credentials it refused does not get them into
// State (shown on /readyz to anyone).
func TestLastErrorNeverHoldsAHeaderOrEnvValue(t *testing.T) {
	const token = "s3cr3t-token-value"
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct{ ID json.RawMessage }
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		msg, _ := json.Marshal("refused " + r.Header.Get("Authorization") + " and " + r.Header.Get("X-Api-Key"))
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32001,"message":` + string(msg) + `}}`))
	}))
	t.Cleanup(ts.Close)
	f := newFront(t)
	b := backends.New(backends.Spec{Name: "web", Kind: upstream.KindHTTP, URL: ts.URL,
		Header: http.Header{"Authorization": {"Bearer " + token}, "X-Api-Key": {"key-" + token}}}, f.Server, nil, fast)
	run(t, b)
	s := waitState(t, b, "failed", isDown)
	if strings.Contains(s.LastError, token) {
		t.Fatalf("LastError leaks a header value: %q", s.LastError)
	}
	if !strings.Contains(s.LastError, "refused") || !strings.Contains(s.LastError, "[redacted]") {
		t.Errorf("LastError %q lost the reason or the redaction mark", s.LastError)
	}

	// An env value quoted by a failing command is cut the same way.
	cmd := backends.New(backends.Spec{Name: "cmd", Kind: upstream.KindStdio, Command: []string{"/nonexistent/" + token},
		Env: []string{"TOKEN=" + token}}, f.Server, nil, fast)
	run(t, cmd)
	if s := waitState(t, cmd, "failed", isDown); strings.Contains(s.LastError, token) {
		t.Fatalf("LastError leaks an env value: %q", s.LastError)
	}
}

// A backend that cannot start is reported down and retried, and takes
// nothing else down.
func TestBackendThatNeverStartsIsRetried(t *testing.T) {
	f := newFront(t)
	set := backends.NewSet(f.Server, fast)
	srv := serveFixture(t, "")
	for _, s := range []backends.Spec{{Name: "bad", Kind: upstream.KindStdio, Command: []string{"/nonexistent"}},
		{Name: "good", Kind: upstream.KindHTTP, URL: srv.ts.URL + "/mcp"}} {
		if err := set.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	run(t, set)
	waitState(t, set.Backend("bad"), "retried", func(s backends.Status) bool { return s.Restarts >= 2 && !s.Up })
	waitState(t, set.Backend("good"), "up", isUp)
	f.callText(t, "good__test_simple_text")
}

func TestSpecValidation(t *testing.T) {
	for _, s := range []backends.Spec{{}, {Name: "x", Kind: "ftp"}, {Name: "x", Kind: "stdio"}, {Name: "x", Kind: "http"},
		{Name: "x", Kind: "stdio", Command: []string{"a"}, Env: []string{"NOEQUALS"}}} {
		if err := s.Validate(); !errors.Is(err, backends.ErrInvalidSpec) {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

func TestSpecMinRoleForFirstMatchingRuleWins(t *testing.T) {
	s := backends.Spec{MinRole: "editor", MinRoles: []backends.RoleRule{
		{Kind: "tool", Name: "admin_*", Role: "admin"},
		{Name: "admin_*", Role: "viewer"},
		{Kind: "resource", Name: "file:///*", Role: "viewer"},
	}}
	for _, tt := range []struct{ kind, name, want string }{
		{"tool", "admin_drop", "admin"},
		{"prompt", "admin_drop", "viewer"},
		{"resource", "file:///a", "viewer"},
		{"resource", "file:///a/b", "editor"},
		{"tool", "other", "editor"},
	} {
		if got := s.MinRoleFor(tt.kind, tt.name); got != tt.want {
			t.Errorf("MinRoleFor(%s, %s) = %q, want %q", tt.kind, tt.name, got, tt.want)
		}
	}
}

// Close waits for every backend to stop, even when another Close (an HTTP
// server's shutdown hook, say) took them out first: a process that returns
// from Close must not leave a backend's child behind.
func TestEveryCloseWaitsForTheBackendsToStop(t *testing.T) {
	dir := t.TempDir()
	f := newFront(t)
	set := backends.NewSet(f.Server, fast)
	pidFiles := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	for i, name := range []string{"a", "b"} {
		if err := set.Add(childSpec(name, pidFiles[i])); err != nil {
			t.Fatal(err)
		}
	}
	run(t, set)
	var pids []int
	for i, name := range []string{"a", "b"} {
		waitState(t, set.Backend(name), "up", isUp)
		raw, err := os.ReadFile(pidFiles[i])
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(string(raw))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	first := make(chan struct{})
	go func() { defer close(first); set.Close() }()
	set.Close()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("child %d still there when Close returned: %v", pid, err)
		}
	}
	<-first
}

// Restart ends a backend's child and starts a new one at once: another
// process, Restarts one more, its tools back; a name not in the set is
// ErrNoSuchBackend.
func TestRestartStartsTheBackendAgain(t *testing.T) {
	f := newFront(t)
	set := backends.NewSet(f.Server, fast)
	pidFile := filepath.Join(t.TempDir(), "pid")
	if err := set.Restart("kid"); !errors.Is(err, backends.ErrNoSuchBackend) {
		t.Errorf("Restart of a name not in the set: %v", err)
	}
	if err := set.Add(childSpec("kid", pidFile)); err != nil {
		t.Fatal(err)
	}
	if err := set.Restart("kid"); !errors.Is(err, backends.ErrSetClosed) {
		t.Errorf("Restart before the set runs: %v", err)
	}
	run(t, set)
	first := waitState(t, set.Backend("kid"), "up", isUp)
	pid1, _ := os.ReadFile(pidFile)
	if err := os.Remove(pidFile); err != nil {
		t.Fatal(err)
	}
	if err := set.Restart("kid"); err != nil {
		t.Fatal(err)
	}
	up := waitState(t, set.Backend("kid"), "up again", func(s backends.Status) bool { return s.Up && s.Restarts == first.Restarts+1 })
	pid2, err := os.ReadFile(pidFile)
	if err != nil || string(pid2) == string(pid1) {
		t.Errorf("after Restart the child is %q (%v), was %q", pid2, err, pid1)
	}
	if up.Restarts != first.Restarts+1 {
		t.Errorf("restarts %d, want %d", up.Restarts, first.Restarts+1)
	}
	f.callText(t, "kid__test_simple_text")
}
