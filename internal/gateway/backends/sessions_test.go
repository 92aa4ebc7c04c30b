// sessions_test.go pins `session: per-client`: each front session reaches
// an upstream session of its own (a child process of its own, or an HTTP
// session of its own), which ends with the front session, when idle, at
// the cap, and with the backend; what an upstream session sends reaches
// only its own client. Front clients are real Streamable HTTP clients of a
// front served on 127.0.0.1; upstream servers are real child processes or
// real HTTP servers.

package backends_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/stdio"
)

// sessionsChild is the value of childEnv that makes the test binary
// sessionsServer on its stdin and stdout.
const sessionsChild = "sessions"

// serveSessionsChild serves sessionsServer as a child process and exits.
func serveSessionsChild() {
	if err := stdio.Serve(context.Background(), sessionsServer(func(*mcp.Request) string {
		return fmt.Sprint("pid=", os.Getpid())
	}), os.Stdin, os.Stdout, stdio.Options{}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// sessionsServer is the fixture plus two tools: "who" answers who the
// upstream session is (by who()) and how many calls it took, and "hold"
// reports progress once, then holds the call until it is cancelled.
func sessionsServer(who func(r *mcp.Request) string) *mcp.Server {
	s := fixture.New(fixture.Options{})
	var calls sync.Map // *mcp.Session → *atomic.Int64
	text := func(s string) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(s)}})
	}
	if err := s.AddTools(
		&mcp.Tool{Name: "who", Handler: func(_ context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			n, _ := calls.LoadOrStore(r.Session, new(atomic.Int64))
			return text(fmt.Sprintf("%s calls=%d", who(r), n.(*atomic.Int64).Add(1)))
		}},
		&mcp.Tool{Name: "hold", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			if err := r.Progress(ctx, 1, 0, "holding"); err != nil {
				return nil, err
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}},
	); err != nil {
		panic(err)
	}
	return s
}

// perClientSpec is a per-client stdio backend running sessionsServer.
func perClientSpec(name string, idle time.Duration, max int) backends.Spec {
	return backends.Spec{Name: name, Kind: upstream.KindStdio, Command: []string{os.Args[0]},
		Env:     []string{childEnv + "=" + sessionsChild, "GORACE=atexit_sleep_ms=0"},
		Session: upstream.SessionPerClient, SessionIdleTimeout: idle, SessionMax: max}
}

// httpFront is the gateway's front served over Streamable HTTP on
// 127.0.0.1, with one backend relayed into it.
type httpFront struct {
	server *mcp.Server
	h      *mcphttp.Handler
	url    string
	b      *backends.Backend
}

func newHTTPFront(t *testing.T, spec backends.Spec, o mcphttp.Options) *httpFront {
	t.Helper()
	f := &httpFront{server: mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "front", Version: "1"}})}
	f.h = mcphttp.NewHandler(f.server, o)
	ts := httptest.NewServer(f.h)
	f.url = ts.URL
	t.Cleanup(func() {
		f.h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	f.b = backends.New(spec, f.server, nil, fast)
	run(t, f.b) // registered after the server: stops first
	waitState(t, f.b, "up", isUp)
	return f
}

// frontClient is one client of the front: it answers sampling with its
// name and records the progress notifications it gets.
type frontClient struct {
	name string
	*mcp.Client
	// sampled, if set, is called as a sampling request arrives, before it
	// is answered.
	sampled  func()
	mu       sync.Mutex
	progress []string // raw progress tokens received
	progCh   chan struct{}
}

func (f *httpFront) connect(t *testing.T, name string) *frontClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := mcphttp.DialStreamable(ctx, f.url, mcphttp.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fc := &frontClient{name: name, progCh: make(chan struct{}, 16)}
	fc.Client = mcp.NewClient(conn, mcp.ClientOptions{
		Info:         mcp.Implementation{Name: name, Version: "1"},
		Capabilities: json.RawMessage(`{"sampling":{},"elicitation":{},"roots":{}}`),
		OnRequest: func(_ context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
			if m.Method != "sampling/createMessage" {
				return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "not here", nil)
			}
			if fc.sampled != nil {
				fc.sampled()
			}
			return json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"` + name + `"}}`), nil
		},
		OnNotification: func(m *jsonrpc.Message) {
			if m.Method != "notifications/progress" {
				return
			}
			tok, _ := jsonrpc.Lookup(m.Params, "progressToken")
			fc.mu.Lock()
			fc.progress = append(fc.progress, string(tok))
			fc.mu.Unlock()
			fc.progCh <- struct{}{}
		},
	})
	t.Cleanup(func() { _ = fc.Close() })
	if _, err := fc.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	return fc
}

func (fc *frontClient) progressTokens() []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]string(nil), fc.progress...)
}

// callTool calls a tool through the front, with a progress token unless
// it is "", and returns its first text, or the JSON-RPC error.
func (fc *frontClient) callTool(ctx context.Context, name, args, progressToken string) (string, error) {
	if args == "" {
		args = "{}"
	}
	params := fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args)
	if progressToken != "" {
		params = fmt.Sprintf(`{"name":%q,"arguments":%s,"_meta":{"progressToken":%q}}`, name, args, progressToken)
	}
	res, err := fc.Call(ctx, "tools/call", json.RawMessage(params))
	if err != nil {
		return "", err
	}
	var r struct{ Content []struct{ Text string } }
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		return "", fmt.Errorf("no text in %s", res)
	}
	return r.Content[0].Text, nil
}

// who calls the backend's "who" tool: "pid=N calls=K".
func (fc *frontClient) who(t *testing.T, tool string) (id string, calls int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	text, err := fc.callTool(ctx, tool, "", "")
	if err != nil {
		t.Fatalf("%s: %s: %v", fc.name, tool, err)
	}
	if _, err := fmt.Sscanf(text[strings.LastIndex(text, " ")+1:], "calls=%d", &calls); err != nil {
		t.Fatalf("%s: %s answered %q", fc.name, tool, text)
	}
	return text[:strings.LastIndex(text, " ")], calls
}

// gone reports whether the process of a "pid=N" identity has exited and
// been reaped.
func gone(t *testing.T, who string) bool {
	t.Helper()
	var pid int
	if _, err := fmt.Sscanf(who, "pid=%d", &pid); err != nil || pid <= 0 {
		t.Fatalf("not a pid: %q", who)
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// Two front sessions reach two upstream processes; each front session's
// later calls reuse its own.
func TestPerClientSessionsAreOnePerFrontSession(t *testing.T) {
	f := newHTTPFront(t, perClientSpec("kid", 0, 0), mcphttp.Options{})
	a, b := f.connect(t, "a"), f.connect(t, "b")

	a1, n := a.who(t, "kid__who")
	if n != 1 {
		t.Errorf("a's first call is call %d of its upstream", n)
	}
	b1, _ := b.who(t, "kid__who")
	if a1 == b1 {
		t.Fatalf("two front sessions share one upstream process (%s)", a1)
	}
	a2, n := a.who(t, "kid__who")
	if a2 != a1 || n != 2 {
		t.Errorf("a's second call went to %s (call %d), want %s call 2", a2, n, a1)
	}
	if got := f.b.OpenSessions(); got != 2 {
		t.Errorf("OpenSessions = %d, want 2", got)
	}
}

// A shared backend (the default) serves every front session on one
// upstream session, and opens none per client.
func TestSharedSessionServesEveryFrontSession(t *testing.T) {
	spec := perClientSpec("kid", 0, 0)
	spec.Session, spec.SessionIdleTimeout, spec.SessionMax = "", 0, 0
	f := newHTTPFront(t, spec, mcphttp.Options{})
	a, b := f.connect(t, "a"), f.connect(t, "b")
	a1, _ := a.who(t, "kid__who")
	b1, _ := b.who(t, "kid__who")
	if a1 != b1 {
		t.Errorf("shared backend: a reached %s, b reached %s", a1, b1)
	}
	if got := f.b.OpenSessions(); got != 0 {
		t.Errorf("OpenSessions = %d on a shared backend", got)
	}
}

// A stateless front has no session to key an upstream session to: its
// calls go on the shared connection, and nothing is left open by them.
func TestStatelessCallsUseTheSharedSession(t *testing.T) {
	f := newHTTPFront(t, perClientSpec("kid", 0, 0), mcphttp.Options{Stateless: true})
	a, b := f.connect(t, "a"), f.connect(t, "b")
	a1, _ := a.who(t, "kid__who")
	b1, _ := b.who(t, "kid__who")
	if a1 != b1 {
		t.Errorf("stateless calls reached %s and %s, want the shared process", a1, b1)
	}
	if got := f.b.OpenSessions(); got != 0 {
		t.Errorf("OpenSessions = %d after stateless calls", got)
	}
}

// DELETE of a front session ends its upstream process, and only its own.
func TestFrontSessionDeleteEndsItsUpstreamProcess(t *testing.T) {
	f := newHTTPFront(t, perClientSpec("kid", 0, 0), mcphttp.Options{})
	a, b := f.connect(t, "a"), f.connect(t, "b")
	a1, _ := a.who(t, "kid__who")
	b1, _ := b.who(t, "kid__who")

	if err := a.Close(); err != nil { // sends DELETE
		t.Fatal(err)
	}
	testkit.WaitFor(t, "a's upstream process exits after DELETE", func() bool { return gone(t, a1) })
	testkit.WaitFor(t, "one upstream session left", func() bool { return f.b.OpenSessions() == 1 })
	if gone(t, b1) {
		t.Fatal("b's upstream process ended with a's front session")
	}
	if b2, n := b.who(t, "kid__who"); b2 != b1 || n != 2 {
		t.Errorf("b's call after a left went to %s (call %d), want %s call 2", b2, n, b1)
	}
}

// A front client that vanishes without DELETE leaves its upstream session
// idle; the idle timeout ends it. The front session itself still works: its
// next call opens a new upstream session.
func TestVanishedClientsUpstreamIsReapedWhenIdle(t *testing.T) {
	f := newHTTPFront(t, perClientSpec("kid", 50*time.Millisecond, 0), mcphttp.Options{})
	a := f.connect(t, "a")
	a1, _ := a.who(t, "kid__who")
	testkit.WaitFor(t, "the idle upstream process exits", func() bool { return gone(t, a1) })
	testkit.WaitFor(t, "no upstream session left", func() bool { return f.b.OpenSessions() == 0 })
	if n := f.h.Sessions(); n != 1 {
		t.Errorf("front sessions = %d, want a's still open", n)
	}
	if a2, n := a.who(t, "kid__who"); a2 == a1 || n != 1 {
		t.Errorf("a's call after the reap went to %s (call %d), want a new process", a2, n)
	}
}

// An upstream process that dies is forgotten, and the front session's
// next call opens a new one.
func TestDeadUpstreamIsReplacedAtTheNextCall(t *testing.T) {
	f := newHTTPFront(t, perClientSpec("kid", 0, 0), mcphttp.Options{})
	a := f.connect(t, "a")
	a1, _ := a.who(t, "kid__who")
	var pid int
	if _, err := fmt.Sscanf(a1, "pid=%d", &pid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the dead upstream session is forgotten", func() bool { return f.b.OpenSessions() == 0 })
	if a2, n := a.who(t, "kid__who"); a2 == a1 || n != 1 {
		t.Errorf("a's call after its upstream died went to %s (call %d), want a new process", a2, n)
	}
	if !f.b.State().Up {
		t.Error("the backend went down with one client's upstream process")
	}
}

// At the cap, a new front session's upstream session takes the place of
// the least recently used one with no call in flight.
func TestSessionMaxEvictsTheLeastRecentlyUsedIdleSession(t *testing.T) {
	f := newHTTPFront(t, perClientSpec("kid", 0, 2), mcphttp.Options{})
	a, b, c := f.connect(t, "a"), f.connect(t, "b"), f.connect(t, "c")
	a1, _ := a.who(t, "kid__who")
	b1, _ := b.who(t, "kid__who")
	a.who(t, "kid__who") // b is now the least recently used

	c1, _ := c.who(t, "kid__who")
	testkit.WaitFor(t, "b's upstream process exits at eviction", func() bool { return gone(t, b1) })
	if gone(t, a1) || gone(t, c1) {
		t.Fatal("eviction ended a session that was not the least recently used")
	}
	if got := f.b.OpenSessions(); got != 2 {
		t.Errorf("OpenSessions = %d, want the cap 2", got)
	}
	if a3, n := a.who(t, "kid__who"); a3 != a1 || n != 3 {
		t.Errorf("a after the eviction: %s call %d, want %s call 3", a3, n, a1)
	}
}

// At the cap with every upstream session busy, a call from a new front
// session is refused with -32603 naming the backend; once a call ends,
// the next one gets in.
func TestSessionMaxAllBusyRefusesWithTheBackendName(t *testing.T) {
	f := newHTTPFront(t, perClientSpec("kid", 0, 2), mcphttp.Options{})
	a, b, c := f.connect(t, "a"), f.connect(t, "b"), f.connect(t, "c")

	holdCtx, release := context.WithCancel(context.Background())
	defer release()
	var held sync.WaitGroup
	for _, fc := range []*frontClient{a, b} {
		held.Add(1)
		go func() {
			defer held.Done()
			_, _ = fc.callTool(holdCtx, "kid__hold", "", "hold")
		}()
	}
	for _, fc := range []*frontClient{a, b} { // each hold is in its upstream
		select {
		case <-fc.progCh:
		case <-time.After(15 * time.Second):
			t.Fatalf("%s: hold never started", fc.name)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err := c.callTool(ctx, "kid__who", "", "")
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError {
		t.Fatalf("call at the cap with all busy: %v, want -32603", err)
	}
	var data struct{ Backend string }
	if err := json.Unmarshal(je.Data, &data); err != nil || data.Backend != "kid" {
		t.Errorf("error data %s, want backend kid", je.Data)
	}
	if !strings.Contains(je.Message, "busy") {
		t.Errorf("error message %q does not say why", je.Message)
	}

	release()
	held.Wait()
	testkit.WaitFor(t, "the held calls end", func() bool {
		_, err := c.callTool(ctx, "kid__who", "", "")
		return err == nil
	})
}

// What a per-client upstream session sends during a call — progress, a
// sampling request — reaches the client that made that call, even with
// two clients' calls in flight at once.
func TestPerClientUpstreamRelaysToItsOwnClient(t *testing.T) {
	f := newHTTPFront(t, perClientSpec("kid", 0, 0), mcphttp.Options{})
	a, b := f.connect(t, "a"), f.connect(t, "b")

	// Both sampling requests must be asked before either is answered: each
	// client answers only once the other has been asked too.
	var asked sync.WaitGroup
	asked.Add(2)
	both := make(chan struct{})
	go func() { asked.Wait(); close(both) }()
	for _, fc := range []*frontClient{a, b} {
		fc.sampled = func() {
			asked.Done()
			select {
			case <-both:
			case <-time.After(15 * time.Second):
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	sampled := map[string]string{}
	var mu sync.Mutex
	for _, fc := range []*frontClient{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := fc.callTool(ctx, "kid__test_sampling", `{"prompt":"who?"}`, "")
			if err == nil {
				_, err = fc.callTool(ctx, "kid__test_tool_with_progress", "", "tok-"+fc.name)
			}
			if err != nil {
				text = err.Error()
			}
			mu.Lock()
			sampled[fc.name] = text
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, fc := range []*frontClient{a, b} {
		if want := "LLM response: " + fc.name; sampled[fc.name] != want {
			t.Errorf("%s: sampling came back %q, want %q", fc.name, sampled[fc.name], want)
		}
		toks := fc.progressTokens()
		if len(toks) != 3 {
			t.Errorf("%s: %d progress notifications, want 3", fc.name, len(toks))
		}
		for _, tok := range toks {
			if tok != `"tok-`+fc.name+`"` {
				t.Errorf("%s got progress %s", fc.name, tok)
			}
		}
	}
}

// An http backend per client: each front session gets an upstream HTTP
// session of its own, and the front session's DELETE sends the upstream
// one DELETE.
func TestPerClientHTTPSessionGetsDeleteWithItsFrontSession(t *testing.T) {
	up := mcphttp.NewHandler(sessionsServer(func(r *mcp.Request) string { return "session=" + r.Session.ID() }), mcphttp.Options{})
	var mu sync.Mutex
	var deleted []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			mu.Lock()
			deleted = append(deleted, r.Header.Get("Mcp-Session-Id"))
			mu.Unlock()
		}
		up.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { up.Close(); ts.CloseClientConnections(); ts.Close() })
	wasDeleted := func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, d := range deleted {
			if "session="+d == id {
				return true
			}
		}
		return false
	}

	f := newHTTPFront(t, backends.Spec{Name: "web", Kind: upstream.KindHTTP, URL: ts.URL,
		Session: upstream.SessionPerClient}, mcphttp.Options{})
	a, b := f.connect(t, "a"), f.connect(t, "b")
	a1, _ := a.who(t, "web__who")
	b1, _ := b.who(t, "web__who")
	if a1 == b1 {
		t.Fatalf("two front sessions share the upstream %s", a1)
	}
	if got := up.Sessions(); got != 3 { // the shared one and two per client
		t.Errorf("upstream sessions = %d, want 3", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "a's upstream session gets DELETE", func() bool { return wasDeleted(a1) })
	testkit.WaitFor(t, "two upstream sessions left", func() bool { return up.Sessions() == 2 })
	if wasDeleted(b1) {
		t.Error("b's upstream session was deleted with a's front session")
	}
}

// Removing a backend ends its per-client upstream sessions.
func TestRemovedBackendEndsItsUpstreamSessions(t *testing.T) {
	f := &httpFront{server: mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "front", Version: "1"}})}
	f.h = mcphttp.NewHandler(f.server, mcphttp.Options{})
	ts := httptest.NewServer(f.h)
	f.url = ts.URL
	t.Cleanup(func() { f.h.Close(); ts.CloseClientConnections(); ts.Close() })
	set := backends.NewSet(f.server, fast)
	if err := set.Add(perClientSpec("kid", 0, 0)); err != nil {
		t.Fatal(err)
	}
	run(t, set)
	waitState(t, set.Backend("kid"), "up", isUp)
	b := set.Backend("kid")
	a := f.connect(t, "a")
	a1, _ := a.who(t, "kid__who")
	if b.OpenSessions() != 1 {
		t.Fatalf("OpenSessions = %d, want 1", b.OpenSessions())
	}
	set.Remove("kid")
	if !gone(t, a1) { // Remove waits for the backend to stop
		t.Error("the upstream process outlived its removed backend")
	}
	if n := b.OpenSessions(); n != 0 {
		t.Errorf("OpenSessions = %d after removal", n)
	}
}

// The session settings are checked with the spec, naming what is wrong.
func TestSessionSpecValidation(t *testing.T) {
	ok := perClientSpec("kid", time.Minute, 3)
	tests := []struct {
		name string
		edit func(*backends.Spec)
		want string // "" for valid
	}{
		{"per-client stdio", func(*backends.Spec) {}, ""},
		{"per-client http", func(s *backends.Spec) { s.Kind, s.URL = upstream.KindHTTP, "http://127.0.0.1:1/mcp" }, ""},
		{"per-client sse", func(s *backends.Spec) { s.Kind, s.URL = upstream.KindSSE, "http://127.0.0.1:1/sse" }, ""},
		{"shared explicit", func(s *backends.Spec) { s.Session, s.SessionIdleTimeout, s.SessionMax = upstream.SessionShared, 0, 0 }, ""},
		{"unknown mode", func(s *backends.Spec) { s.Session = "pooled" }, "session"},
		{"idle timeout without per-client", func(s *backends.Spec) { s.Session, s.SessionMax = "", 0 }, "session_idle_timeout"},
		{"max without per-client", func(s *backends.Spec) { s.Session, s.SessionIdleTimeout = upstream.SessionShared, 0 }, "session_max"},
		{"negative idle timeout", func(s *backends.Spec) { s.SessionIdleTimeout = -time.Second }, "session_idle_timeout"},
		{"negative max", func(s *backends.Spec) { s.SessionMax = -1 }, "session_max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.edit(&s)
			err := s.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, backends.ErrInvalidSpec) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

// A per-client upstream session that fails to open is answered -32603
// with data.backend and no detail: neither the reason (logged) nor the
// backend's configured header values reach the caller.
func TestPerClientOpenFailureNamesTheBackendAndHidesSecrets(t *testing.T) {
	const secret = "Bearer per-client-secret-5d2e"
	up := mcphttp.NewHandler(sessionsServer(func(r *mcp.Request) string { return r.Session.ID() }), mcphttp.Options{})
	var inits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if m, err := jsonrpc.Parse(body); err == nil && m.Method == "initialize" && inits.Add(1) > 1 {
			// Only the shared session may begin; the others are refused
			// by a server that quotes the credential it got.
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(jsonrpc.AppendError(nil, m.ID, jsonrpc.Errorf(-32001, "refused %s", r.Header.Get("Authorization"))))
			return
		}
		up.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { up.Close(); ts.CloseClientConnections(); ts.Close() })

	f := newHTTPFront(t, backends.Spec{Name: "web", Kind: upstream.KindHTTP, URL: ts.URL,
		Header: http.Header{"Authorization": {secret}}, Session: upstream.SessionPerClient}, mcphttp.Options{})
	a := f.connect(t, "a")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err := a.callTool(ctx, "web__who", "", "")
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError {
		t.Fatalf("call when the upstream session cannot open: %v, want -32603", err)
	}
	var data struct{ Backend string }
	if err := json.Unmarshal(je.Data, &data); err != nil || data.Backend != "web" {
		t.Errorf("error data %s, want backend web", je.Data)
	}
	if strings.Contains(je.Message, "per-client-secret") {
		t.Errorf("the caller sees the backend's header value: %q", je.Message)
	}
	// Why is the operator's to read in the log: the caller is told only
	// which backend failed.
	if je.Message != "backend web is unavailable" {
		t.Errorf("error message %q, want \"backend web is unavailable\" and no detail", je.Message)
	}
	if n := f.b.OpenSessions(); n != 0 {
		t.Errorf("OpenSessions = %d after a failed open", n)
	}
}

// An http backend per client with a client credentials token: every
// upstream session — the shared one and one per front session — carries
// the one token the backend got, asked for once, not a token per session.
func TestPerClientHTTPSessionsShareOneClientCredentialsToken(t *testing.T) {
	var issued atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":3600}`, n)
	}))
	t.Cleanup(tokens.Close)
	up := mcphttp.NewHandler(sessionsServer(func(r *mcp.Request) string { return "session=" + r.Session.ID() }), mcphttp.Options{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer tok-") {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		up.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { up.Close(); ts.CloseClientConnections(); ts.Close() })

	f := newHTTPFront(t, backends.Spec{Name: "web", Kind: upstream.KindHTTP, URL: ts.URL, Session: upstream.SessionPerClient,
		OAuth: &oauthclient.ClientCredentials{ClientID: "gw", ClientSecret: "s3cret", TokenURL: tokens.URL}}, mcphttp.Options{})
	seen := map[string]bool{}
	for _, name := range []string{"a", "b", "c"} {
		id, _ := f.connect(t, name).who(t, "web__who")
		seen[id] = true
	}
	if len(seen) != 3 {
		t.Fatalf("three front sessions reached %d upstream sessions, want 3", len(seen))
	}
	if n := issued.Load(); n != 1 {
		t.Errorf("four upstream sessions asked for %d tokens, want 1", n)
	}
}
