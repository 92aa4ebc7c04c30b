// main_test.go is the test rig: the test binary doubles as a stdio backend
// (the fixture on its stdin and stdout) when started with childEnv set, and
// a front mcp.Server is driven through a Session as a transport would.

package backends_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/stdio"
)

const (
	childEnv = "MCPGATE_BACKEND_TEST_CHILD"
	// pidEnv names a file the child writes its pid to as it starts.
	pidEnv = "MCPGATE_BACKEND_TEST_PIDFILE"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == sessionsChild {
		serveSessionsChild()
	}
	if os.Getenv(childEnv) == "server" {
		if path := os.Getenv(pidEnv); path != "" {
			if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
				os.Exit(1)
			}
		}
		if err := stdio.Serve(context.Background(), fixture.New(fixture.Options{}), os.Stdin, os.Stdout, stdio.Options{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	testkit.Main(m)
}

// childSpec is a stdio backend running this binary as the fixture.
func childSpec(name, pidFile string) backends.Spec {
	return backends.Spec{Name: name, Kind: upstream.KindStdio, Command: []string{os.Args[0]},
		Env: []string{childEnv + "=server", pidEnv + "=" + pidFile, "GORACE=atexit_sleep_ms=0"}}
}

// fast is the options of every test: quick restarts and liveness pings.
var fast = backends.Options{Backoff: upstream.Backoff{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond},
	PingInterval: 50 * time.Millisecond, StartTimeout: 10 * time.Second}

// waitState waits, within a deadline, for the backend's state to satisfy ok.
func waitState(t *testing.T, b *backends.Backend, what string, ok func(backends.Status) bool) backends.Status {
	t.Helper()
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	for {
		changed := b.Changed()
		if s := b.State(); ok(s) {
			return s
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("backend %s never became %s: %+v", b.Name(), what, b.State())
		}
	}
}

func isUp(s backends.Status) bool   { return s.Up }
func isDown(s backends.Status) bool { return !s.Up && s.LastError != "" }

// run starts b until the test ends.
func run(t *testing.T, b interface{ Run(context.Context) error }) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// front is the gateway side: a server and one initialized client session.
type front struct {
	*mcp.Server
	ss  *mcp.Session
	out *mcptest.Recorder
}

func newFront(t *testing.T) *front {
	t.Helper()
	f := &front{Server: mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "front", Version: "1"}}), out: &mcptest.Recorder{}}
	f.ss = f.NewSession(mcp.SessionOptions{ID: "front", Out: f.out})
	t.Cleanup(f.ss.Close)
	f.call(t, "initialize", `{"protocolVersion":"`+mcp.LatestVersion+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	f.ss.Handle(context.Background(), request(t, nil, "notifications/initialized", ""), nil)
	return f
}

var lastID atomic.Int64

func request(t *testing.T, id jsonrpc.ID, method, params string) *jsonrpc.Message {
	t.Helper()
	var raw json.RawMessage
	if params != "" {
		raw = json.RawMessage(params)
	}
	m, err := jsonrpc.Parse(jsonrpc.AppendRequest(nil, id, method, raw))
	if err != nil {
		t.Fatalf("bad request %s: %v", method, err)
	}
	return m
}

func (f *front) call(t *testing.T, method, params string) *jsonrpc.Message {
	t.Helper()
	id := jsonrpc.ID(strconv.FormatInt(lastID.Add(1), 10))
	answer := f.ss.Handle(context.Background(), request(t, id, method, params), &mcptest.Recorder{})
	m, err := jsonrpc.Parse(answer)
	if err != nil {
		t.Fatalf("%s: bad answer %s: %v", method, answer, err)
	}
	return m
}

// tools returns the front's tool names.
func (f *front) tools(t *testing.T) []string {
	t.Helper()
	m := f.call(t, "tools/list", "")
	var r struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("tools/list %s %s: %v", m.Result, m.Error, err)
	}
	var out []string
	for _, tool := range r.Tools {
		out = append(out, tool.Name)
	}
	return out
}

func (f *front) has(t *testing.T, tool string) bool { return slices.Contains(f.tools(t), tool) }

// callText calls a tool through the front and returns its first text.
func (f *front) callText(t *testing.T, tool string) string {
	t.Helper()
	m := f.call(t, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":{}}`, tool))
	var r struct{ Content []struct{ Text string } }
	if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("tools/call %s: %s %s", tool, m.Result, m.Error)
	}
	return r.Content[0].Text
}
