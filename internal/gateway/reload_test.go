// reload_test.go pins hot reload: backends are added, removed and
// restarted while a client's session on another backend stays open and
// keeps calling it, untouched down to its upstream session; a refused
// reload (a bad key, a secret missing from the environment) changes
// nothing; rate limits are applied and settings bound at start are kept.
//
// Every identifier here starts with "rl" so that it cannot collide with the
// other tests of this package.

package gateway_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// rlHeader is what bkGateway puts before a test's YAML.
const rlHeader = "listen: 127.0.0.1:0\nauth: {disabled: true}\naudit: {disabled: true}\n"

// rlFixture is the fixture over Streamable HTTP, counting the upstream
// sessions opened on it (POSTs without a session id: initialize; the
// server/discover probe before it says its method in Mcp-Method).
type rlFixture struct {
	url   string
	inits atomic.Int32
}

func rlStartFixture(t *testing.T) *rlFixture {
	f := &rlFixture{}
	f.url, _ = bkFixtureHTTP(t, func(r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get(mcphttp.HeaderSessionID) == "" && r.Header.Get(mcphttp.HeaderMethod) == "" {
			f.inits.Add(1)
		}
	})
	return f
}

// rlBackend is one YAML backend line over the fixture at f.
func rlBackend(name string, f *rlFixture, extra string) string {
	return "  - {name: " + name + ", kind: http, url: \"" + f.url + "\"" + extra + "}\n"
}

// rlConfig parses a configuration as bkGateway builds its own.
func rlConfig(t *testing.T, yamlText string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(rlHeader + yamlText))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// rlClient is a Streamable HTTP session with the notifications it got. It
// offers sampling: a sampling request is signalled on asked and answered
// once release is closed, so that a test can hold a call in flight.
type rlClient struct {
	c       *mcp.Client
	conn    *mcphttp.StreamableConn
	notify  chan string // notification methods, in order
	asked   chan struct{}
	release chan struct{}
}

// rlDial opens a session and returns once its standalone stream delivers
// list_changed: a notification sent before that stream opens would be
// missed, so the test would wait for nothing.
func rlDial(t *testing.T, base string, gw *gateway.Gateway) *rlClient {
	t.Helper()
	ctx := testkit.Context(t)
	conn, err := mcphttp.DialStreamable(ctx, base+"/mcp", mcphttp.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cl := &rlClient{conn: conn, notify: make(chan string, 1000), asked: make(chan struct{}, 1), release: make(chan struct{})}
	cl.c = mcp.NewClient(conn, mcp.ClientOptions{
		Info:         mcp.Implementation{Name: "reload-test", Version: "0"},
		Capabilities: json.RawMessage(`{"sampling":{}}`),
		OnRequest: func(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
			if m.Method != "sampling/createMessage" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", m.Method)
			}
			select {
			case cl.asked <- struct{}{}:
			default:
			}
			select {
			case <-cl.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"held across the reload"},"model":"rl"}`), nil
		},
		OnNotification: func(m *jsonrpc.Message) {
			select {
			case cl.notify <- m.Method:
			default:
			}
		},
	})
	t.Cleanup(func() { _ = cl.c.Close() })
	if _, err := cl.c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	probe := &mcp.Tool{Name: "rl_stream_probe", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return nil, nil
	}}
	deadline := time.Now().Add(20 * time.Second)
	for !cl.got("notifications/tools/list_changed", 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the session's standalone stream never delivered list_changed")
		}
		if err := gw.Server().AddTools(probe); err != nil {
			t.Fatal(err)
		}
		gw.Server().RemoveTools(probe.Name)
	}
	cl.drain()
	return cl
}

// got waits up to d for a notification named method.
func (cl *rlClient) got(method string, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case m := <-cl.notify:
			if m == method {
				return true
			}
		case <-t.C:
			return false
		}
	}
}

func (cl *rlClient) drain() {
	for {
		select {
		case <-cl.notify:
		default:
			return
		}
	}
}

// tools lists the tool names the session sees, sorted.
func (cl *rlClient) tools(t *testing.T) []string {
	t.Helper()
	var names []string
	params := map[string]any{}
	for {
		res, err := gwCall(testkit.Context(t), cl.c, "tools/list", params)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, gwNames(t, res, "tools", "name")...)
		cursor, ok := jsonrpc.LookupString(res, "nextCursor")
		if !ok || cursor == "" {
			break
		}
		params = map[string]any{"cursor": cursor}
	}
	slices.Sort(names)
	return names
}

// waitTools polls tools/list until ok holds for the names listed.
func (cl *rlClient) waitTools(t *testing.T, what string, ok func(names []string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		names := cl.tools(t)
		if ok(names) {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools/list never showed %s; last %v", what, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rlHas reports whether some name starts with prefix.
func rlHas(names []string, prefix string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) })
}

// rlCallSimple calls the fixture's test_simple_text under prefix and
// fails unless it answers.
func (cl *rlClient) callSimple(t *testing.T, prefix string) {
	t.Helper()
	res, err := gwCallTool(testkit.Context(t), cl.c, prefix+"test_simple_text", nil)
	if err != nil || !strings.Contains(string(res), "simple text response") {
		t.Fatalf("%stest_simple_text: %s, %v", prefix, res, err)
	}
}

// The test: a client session open on backend a keeps its session
// id and keeps calling a, whose upstream session is never reopened and
// whose call in flight (held open by a sampling request to the client)
// completes, while a reload adds b, removes c and restarts d (its prefix
// changed); the client is told the list changed and sees b's tools and
// d's under the new prefix, and none of c's.
func TestReloadAddsAndRemovesABackendWhileASessionStaysOpenOnAnother(t *testing.T) {
	testkit.LeakCheck(t)
	a, b, c, d := rlStartFixture(t), rlStartFixture(t), rlStartFixture(t), rlStartFixture(t)
	first := "backends:\n" + rlBackend("a", a, "") + rlBackend("c", c, "") + rlBackend("d", d, "")
	base, gw := bkGateway(t, first)
	bkWaitReady(t, base, http.StatusOK)
	cl := rlDial(t, base, gw)
	session := cl.conn.SessionID()
	names := cl.waitTools(t, "a's, c's and d's tools", func(n []string) bool {
		return rlHas(n, "a__") && rlHas(n, "c__") && rlHas(n, "d__")
	})
	cl.callSimple(t, "a__")
	if a.inits.Load() != 1 || d.inits.Load() != 1 {
		t.Fatalf("upstream sessions opened: a %d, d %d; want 1 each", a.inits.Load(), d.inits.Load())
	}
	type answer struct {
		res json.RawMessage
		err error
	}
	inflight := make(chan answer, 1)
	go func() {
		res, err := gwCallTool(testkit.Context(t), cl.c, "a__test_sampling", map[string]any{"prompt": "hold"})
		inflight <- answer{res, err}
	}()
	select {
	case <-cl.asked:
	case <-testkit.Context(t).Done():
		t.Fatal("a__test_sampling never asked the client to sample")
	}

	rep, err := gw.Reload(testkit.Context(t), rlConfig(t, "backends:\n"+rlBackend("a", a, "")+rlBackend("b", b, "")+
		rlBackend("d", d, ", prefix: dd__")))
	if err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if !slices.Equal(rep.Added, []string{"b"}) || !slices.Equal(rep.Removed, []string{"c"}) ||
		!slices.Equal(rep.Restarted, []string{"d"}) || !slices.Equal(rep.Unchanged, []string{"a"}) ||
		rep.RateLimits || len(rep.NeedRestart) != 0 {
		t.Errorf("report = %+v, want b added, c removed, d restarted, a unchanged, nothing else", rep)
	}
	if !cl.got("notifications/tools/list_changed", 20*time.Second) {
		t.Error("the client got no tools/list_changed")
	}
	after := cl.waitTools(t, "b's tools and d's under dd__, without c's", func(n []string) bool {
		return rlHas(n, "b__") && rlHas(n, "dd__") && !rlHas(n, "c__") && !rlHas(n, "d__")
	})
	if got, want := len(after), len(names); got != want {
		t.Errorf("%d tools after the reload, want %d (three fixtures' worth)", got, want)
	}
	cl.callSimple(t, "a__")
	cl.callSimple(t, "b__")
	cl.callSimple(t, "dd__")
	close(cl.release)
	if got := <-inflight; got.err != nil || !strings.Contains(string(got.res), "held across the reload") {
		t.Errorf("the call in flight on a across the reload: %s, %v", got.res, got.err)
	}
	if id := cl.conn.SessionID(); id != session {
		t.Errorf("session id %q became %q", session, id)
	}
	if n := a.inits.Load(); n != 1 {
		t.Errorf("a's upstream session was opened %d times, want once: an unchanged backend is not touched", n)
	}
	if n := d.inits.Load(); n != 2 {
		t.Errorf("d's upstream session was opened %d times, want twice: a changed backend is restarted", n)
	}
	_, r := bkWaitReady(t, base, http.StatusOK)
	var up []string
	for _, s := range r.Backends {
		up = append(up, s.Name)
	}
	if !slices.Equal(up, []string{"a", "b", "d"}) {
		t.Errorf("/readyz backends %v, want [a b d]", up)
	}

	// The same configuration again changes nothing.
	rep, err = gw.Reload(testkit.Context(t), rlConfig(t, "backends:\n"+rlBackend("a", a, "")+rlBackend("b", b, "")+
		rlBackend("d", d, ", prefix: dd__")))
	if err != nil || rep.Changed() || len(rep.Unchanged) != 3 {
		t.Errorf("the same configuration again: %+v, %v; want all three unchanged", rep, err)
	}
}

// A gateway started without backends serves /readyz and declares its
// capabilities as before (ready with none; no completions), and a reload
// can add its first one.
func TestReloadAddsTheFirstBackend(t *testing.T) {
	testkit.LeakCheck(t)
	a := rlStartFixture(t)
	base, gw := bkGateway(t, "")
	if code, body, r := bkReadyz(t, base); code != http.StatusOK || !r.Ready || len(r.Backends) != 0 {
		t.Fatalf("/readyz without backends: %d %s", code, body)
	}
	cl := rlDial(t, base, gw)
	if caps, _ := jsonrpc.Lookup(cl.c.InitializeResult(), "capabilities"); len(caps) == 0 || strings.Contains(string(caps), "completions") {
		t.Errorf("a gateway without backends declares completions: %s", caps)
	}
	if names := cl.tools(t); len(names) != 0 {
		t.Fatalf("tools before any backend: %v", names)
	}
	rep, err := gw.Reload(testkit.Context(t), rlConfig(t, "backends:\n"+rlBackend("a", a, "")))
	if err != nil || !slices.Equal(rep.Added, []string{"a"}) {
		t.Fatalf("Reload: %+v, %v", rep, err)
	}
	cl.waitTools(t, "a's tools", func(n []string) bool { return rlHas(n, "a__") })
	cl.callSimple(t, "a__")
}

// A configuration with a bad key is refused with the key named, and the
// catalogue and the backends stay as they were.
func TestReloadRefusesAnInvalidConfigurationNamingTheKey(t *testing.T) {
	testkit.LeakCheck(t)
	a, b := rlStartFixture(t), rlStartFixture(t)
	base, gw := bkGateway(t, "backends:\n"+rlBackend("a", a, ""))
	bkWaitReady(t, base, http.StatusOK)
	cl := rlDial(t, base, gw)
	before := cl.waitTools(t, "a's tools", func(n []string) bool { return rlHas(n, "a__") })

	for _, tc := range []struct {
		name, key string
		edit      func(*config.Config)
	}{
		{"unknown role", "backends[1].min_role", func(c *config.Config) { c.Backends[1].MinRole = "root" }},
		{"bad kind", "backends[1].kind", func(c *config.Config) { c.Backends[1].Kind = "ftp" }},
		{"duplicate name", "backends[1].name", func(c *config.Config) { c.Backends[1].Name = "a" }},
		{"negative rate", "rate_limits.default.rate", func(c *config.Config) { c.RateLimits.Default.Rate = -1 }},
		// roles are kept until a restart, so the role the new file defines
		// is unknown to the running gateway.
		{"role only the new file knows", "backends[1].min_role", func(c *config.Config) {
			c.Roles = config.RolesConfig{"ops": "editor"}
			c.Backends[1].MinRole = "ops"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := rlConfig(t, "backends:\n"+rlBackend("a", a, "")+rlBackend("b", b, ""))
			tc.edit(cfg)
			rep, err := gw.Reload(testkit.Context(t), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("Reload = %+v, %v; want an error naming %s", rep, err, tc.key)
			}
			if rep.Changed() {
				t.Errorf("a refused reload reports changes: %+v", rep)
			}
		})
	}
	if after := cl.tools(t); !slices.Equal(after, before) {
		t.Errorf("tools after refused reloads %v, want %v", after, before)
	}
	if n := b.inits.Load(); n != 0 {
		t.Errorf("b was reached %d times by refused reloads", n)
	}
	cl.callSimple(t, "a__")
}

// A backend secret the environment does not hold refuses the whole
// reload, naming the key: the other backend of the same file is not added
// either, and the message carries no secret.
func TestReloadRefusesAMissingSecret(t *testing.T) {
	testkit.LeakCheck(t)
	const secret = "rl-present-secret-93a1"
	t.Setenv("RL_PRESENT_TOKEN", secret)
	a, b, e := rlStartFixture(t), rlStartFixture(t), rlStartFixture(t)
	base, gw := bkGateway(t, "backends:\n"+rlBackend("a", a, ""))
	bkWaitReady(t, base, http.StatusOK)
	cl := rlDial(t, base, gw)
	before := cl.waitTools(t, "a's tools", func(n []string) bool { return rlHas(n, "a__") })

	cfg := rlConfig(t, "backends:\n"+rlBackend("a", a, ", headers_from: {Authorization: RL_PRESENT_TOKEN}")+
		rlBackend("b", b, "")+rlBackend("e", e, ", headers_from: {X-Key: RL_SURELY_UNSET_VAR}"))
	rep, err := gw.Reload(testkit.Context(t), cfg)
	if err == nil || !strings.Contains(err.Error(), "backends[2].headers_from.X-Key") {
		t.Fatalf("Reload = %+v, %v; want an error naming backends[2].headers_from.X-Key", rep, err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error reveals a secret: %v", err)
	}
	if after := cl.tools(t); !slices.Equal(after, before) {
		t.Errorf("tools after the refused reload %v, want %v", after, before)
	}
	if b.inits.Load() != 0 || e.inits.Load() != 0 || a.inits.Load() != 1 {
		t.Errorf("upstream sessions: a %d, b %d, e %d; want a's one only", a.inits.Load(), b.inits.Load(), e.inits.Load())
	}
	_, r := bkWaitReady(t, base, http.StatusOK)
	if len(r.Backends) != 1 || r.Backends[0].Name != "a" {
		t.Errorf("/readyz backends after the refused reload: %+v", r.Backends)
	}
}

// New rate limits are in force at once; a setting bound at start (here
// listen) is reported and keeps its running value.
func TestReloadAppliesRateLimitsAndKeepsWhatNeedsARestart(t *testing.T) {
	testkit.LeakCheck(t)
	a := rlStartFixture(t)
	base, gw := bkGateway(t, "backends:\n"+rlBackend("a", a, ""))
	bkWaitReady(t, base, http.StatusOK)
	cl := rlDial(t, base, gw)
	cl.waitTools(t, "a's tools", func(n []string) bool { return rlHas(n, "a__") })
	for range 3 {
		cl.callSimple(t, "a__")
	}

	cfg := rlConfig(t, "rate_limits: {default: {rate: 0.001, burst: 1}}\nbackends:\n"+rlBackend("a", a, ""))
	cfg.Listen = "127.0.0.1:1"
	rep, err := gw.Reload(testkit.Context(t), cfg)
	if err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if !rep.RateLimits || !slices.Equal(rep.NeedRestart, []string{"listen"}) || !slices.Equal(rep.Unchanged, []string{"a"}) {
		t.Errorf("report = %+v, want rate limits applied, listen needing a restart, a unchanged", rep)
	}
	cl.callSimple(t, "a__")
	_, err = gwCallTool(testkit.Context(t), cl.c, "a__test_simple_text", nil)
	gwWantRefusal(t, "the second call under burst 1", err, jsonrpc.CodeRateLimited, "rate_limited")
}

// A secret whose value changed in the environment restarts its backend
// with the new value; the log says what changed by field name and never
// shows either value.
func TestReloadRestartsABackendWhoseSecretChangedWithoutLoggingIt(t *testing.T) {
	testkit.LeakCheck(t)
	const oldSecret, newSecret = "rl-old-secret-5d2e", "rl-new-secret-c7a0"
	t.Setenv("RL_ROTATED_TOKEN", oldSecret)
	got := make(chan string, 100)
	url, _ := bkFixtureHTTP(t, func(r *http.Request) {
		select {
		case got <- r.Header.Get("Authorization"):
		default:
		}
	})
	logs := &testkit.Output{}
	yamlText := "backends:\n  - {name: a, kind: http, url: \"" + url + "\", headers_from: {Authorization: RL_ROTATED_TOKEN}}\n"
	gw, err := gateway.New(context.Background(), rlConfig(t, yamlText), gateway.Options{
		Logger:  slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Backend: bkFast,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close(context.Background()) })
	bkRun(t, gw)
	bound := testkit.Context(t)
	waitHeader := func(want string) {
		t.Helper()
		for {
			select {
			case h := <-got:
				if h == want {
					return
				}
			case <-bound.Done():
				t.Fatalf("the backend never got Authorization %q", want)
			}
		}
	}
	waitHeader(oldSecret)

	t.Setenv("RL_ROTATED_TOKEN", newSecret)
	rep, err := gw.Reload(testkit.Context(t), rlConfig(t, yamlText))
	if err != nil || !slices.Equal(rep.Restarted, []string{"a"}) {
		t.Fatalf("Reload = %+v, %v; want a restarted", rep, err)
	}
	waitHeader(newSecret)
	out := string(logs.Bytes())
	if !strings.Contains(out, `"changed":"header"`) {
		t.Errorf("the restart is not logged with the field that changed:\n%s", out)
	}
	if strings.Contains(out, oldSecret) || strings.Contains(out, newSecret) {
		t.Errorf("the log shows a secret:\n%s", out)
	}
}
