// framed_test.go pins the framed connection (docs/wire.md §3): one at a time,
// a later one re-attaching, a vanished gateway's let go by the pings, no
// authorization, one tools begin per connection — through the container
// contract's /register when the program has one, with channels that come
// early waiting for Begun — and the client channels that are not MCP
// exchanges: Info, and Postgres and Daemon ids that pair nothing. Its last
// test shows that a slow
// tool call delays no other exchange on the connection.

package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/wire"
)

// One framed connection at a time: while one is open another upgrade is
// refused with 409 before it happens, and the proxy logs the refusal with
// the remote address; once it has ended, a new one is accepted.
func TestOneFramedConnectionAtATime(t *testing.T) {
	ctx := testCtx(t)
	logs := &logWatch{}
	base := serveProxy(t, Options{Upstream: fixtureUpstream(t, nil), Logger: logs.logger()})
	httpBase := "http" + strings.TrimPrefix(base, "ws")

	// A request that is no upgrade (a probe, a browser) takes nothing.
	resp, err := http.Get(httpBase + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode == http.StatusConflict {
		t.Fatalf("a plain GET / was answered %d", resp.StatusCode)
	}

	f := beginFramed(t, ctx, base)
	ws, resp, err := websocket.Dial(ctx, base+"/", nil)
	if err == nil {
		ws.CloseNow()
		t.Fatal("a second framed connection was accepted while the first is open")
	}
	if resp == nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("while the first is open: %v; want HTTP 409 before the upgrade", err)
	}
	logs.waitFor(t, ctx, "proxy: a second framed connection refused while one is open", 1)
	if !strings.Contains(logs.String(), `"remote":"127.0.0.1:`) {
		t.Errorf("the refusal's log line names no remote address:\n%s", logs)
	}
	want(t, "the first connection, still", result(t, f.exchange(t, ctx, "tools/list", "null")), `"test_simple_text"`)

	if err := f.cl.Close(); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, ctx, "proxy: framed connection ended", 1)
	again := beginFramed(t, ctx, base)
	want(t, "a connection after the first ended", result(t, again.exchange(t, ctx, "tools/list", "null")), `"test_simple_text"`)
}

// A later connection re-attaches to the begun container: its first begin,
// with arguments equal as JSON to the first's, is answered with the same
// Begun and the program is not registered again; other arguments are
// refused ("kind":"begun") and the finish follows. The secrets fed on the
// first connection still hold.
func TestALaterConnectionReattaches(t *testing.T) {
	ctx := testCtx(t)
	logs := &logWatch{}
	prog, programURL := serveContractProgram(t)
	prog.let()
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindContract, URL: programURL, Logger: logs.logger()})
	base := serveProxy(t, Options{Upstream: up, Logger: logs.logger()})

	first := dialFramed(t, ctx, base)
	_, ans := begin(t, ctx, first, `{"ok": true, "n": [1, 2]}`)
	if !ans.Begun() || string(ans.Answer) != registerAnswer {
		t.Fatalf("first begin: %+v", ans)
	}
	recv(t, ctx, prog.registers)
	_ = first.Close()
	logs.waitFor(t, ctx, "proxy: framed connection ended", 1)

	second := dialFramed(t, ctx, base)
	scope, ans := begin(t, ctx, second, `{"n":[1,2],"ok":true}`)
	if !ans.Begun() || string(ans.Answer) != registerAnswer {
		t.Fatalf("re-attach: %+v, want the first Begun, %s", ans, registerAnswer)
	}
	f := &framed{cl: second, scope: scope, begun: ans}
	want(t, "after the re-attach", result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_simple_text"}`)), "simple text")
	logs.waitFor(t, ctx, "proxy: re-attached", 1)
	_ = second.Close()
	logs.waitFor(t, ctx, "proxy: framed connection ended", 2)

	third := dialFramed(t, ctx, base)
	refused, ans := begin(t, ctx, third, `{"ok": true, "n": [2, 1]}`)
	if ans.Begun() || !strings.Contains(string(ans.Error), `"kind":"begun"`) {
		t.Fatalf("a begin with other arguments: %+v, want kind begun", ans)
	}
	if _, err := refused.Next(ctx); !isEOF(err) {
		t.Errorf("after the refusal: %v; want the finish", err)
	}
	select {
	case body := <-prog.registers:
		t.Errorf("the program was registered again: %s", body)
	default:
	}
}

// A gateway whose host vanished sends nothing, not even a close: the
// proxy's pings go unanswered, it ends the connection, and the next
// gateway's connection is accepted and re-attaches.
func TestAVanishedGatewayDoesNotHoldTheSlot(t *testing.T) {
	ctx := testCtx(t)
	logs := &logWatch{}
	base := serveProxy(t, Options{Upstream: fixtureUpstream(t, nil), Logger: logs.logger(),
		KeepAlive: 20 * time.Millisecond, KeepAliveTimeout: 40 * time.Millisecond})
	ws, _, err := websocket.Dial(ctx, base+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	begin := wire.AppendFrame(nil, wire.Frame{Type: wire.TypeRequest, Scope: 1, Payload: wire.BeginTools{}.Append(nil)})
	if err := ws.Write(ctx, websocket.MessageBinary, begin); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, ctx, "proxy: begun", 1)
	// From here on this peer reads nothing, so it answers no ping.
	logs.waitFor(t, ctx, "wire: the peer is gone: no pong", 1)
	logs.waitFor(t, ctx, "proxy: framed connection ended", 1)
	f := beginFramed(t, ctx, base)
	want(t, "the next gateway", result(t, f.exchange(t, ctx, "tools/list", "null")), `"test_simple_text"`)
}

func TestAnAuthorizationFrameClosesTheConnection(t *testing.T) {
	ctx := testCtx(t)
	base := serveProxy(t, Options{Upstream: fixtureUpstream(t, nil)})
	ws, _, err := websocket.Dial(ctx, base+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	frame := wire.AppendFrame(nil, wire.Frame{Type: wire.TypeAuthorization, Payload: []byte("Bearer x")})
	if err := ws.Write(ctx, websocket.MessageBinary, frame); err != nil {
		t.Fatal(err)
	}
	_, msg, err := ws.Read(ctx)
	if status := websocket.CloseStatus(err); status != websocket.StatusPolicyViolation {
		t.Errorf("after a type-0 frame: message %q, %v; want the connection closed (policy violation)", msg, err)
	}
}

func TestASecondBeginIsRefusedAndTheFirstStaysUsable(t *testing.T) {
	ctx := testCtx(t)
	base := serveProxy(t, Options{Upstream: fixtureUpstream(t, nil)})
	f := beginFramed(t, ctx, base)
	if f.begun.Answer != nil {
		t.Errorf("Begun with no contract carries %s, want nothing", f.begun.Answer)
	}

	second, ans := begin(t, ctx, f.cl, `{"again":true}`)
	if ans.Begun() || !json.Valid(ans.Error) {
		t.Fatalf("second begin: %+v; want [1] and an error value", ans)
	}
	want(t, "second begin's error", ans.Error, `"kind"`)
	if _, err := second.Next(ctx); !isEOF(err) {
		t.Errorf("second begin after its error: %v; want the finish", err)
	}
	want(t, "the first begin's scope", result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_simple_text"}`)), "simple text")
}

// contractProgram follows the container contract: /register refuses the
// arguments {"ok": false}, and accepts any others once (holding that
// answer until release is closed); /secrets refuses the value
// wrongSecret; /mcp is the fixture.
type contractProgram struct {
	mcp       *counter
	registers chan string // every /register body, as it arrives
	release   chan struct{}
	let       func()      // closes release, once
	secrets   chan string // every /secrets body the program took
	accepted  atomic.Bool
}

const (
	registerRefusal = `{"kind": "arguments", "error": "ok must be true", "big": 123456789012345678901234567890}`
	registerAnswer  = `{"session": "s-1", "n": 123456789012345678901234567890, "x-unknown": [null]}`
	secretsRefusal  = `{"kind": "secrets", "error": "API_KEY was not accepted"}`
	wrongSecret     = "sk-wrong-7f3a9c61"
)

// serveContractProgram serves a new program and returns it and its URL.
func serveContractProgram(t *testing.T) (*contractProgram, string) {
	release := make(chan struct{})
	p := &contractProgram{
		mcp:       &counter{next: mcpHandler(t, fixture.New(fixture.Options{}))},
		registers: make(chan string, 8),
		release:   release,
		let:       sync.OnceFunc(func() { close(release) }),
		secrets:   make(chan string, 8),
	}
	url := serveHandler(t, p)
	t.Cleanup(p.let) // first: a failed test must not leave the handler waiting, nor Close waiting for it
	return p, url
}

func (p *contractProgram) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/mcp" {
		p.mcp.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	switch r.URL.Path {
	case "/register":
		p.registers <- string(body)
		var req struct {
			Arguments struct{ OK *bool } `json:"arguments"`
		}
		_ = json.Unmarshal(body, &req)
		switch {
		case req.Arguments.OK != nil && !*req.Arguments.OK:
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, registerRefusal)
		case p.accepted.Swap(true):
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"kind":"already_registered"}`)
		default:
			<-p.release
			_, _ = io.WriteString(w, registerAnswer)
		}
	case "/secrets":
		if strings.Contains(string(body), wrongSecret) {
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, secretsRefusal)
			return
		}
		p.secrets <- string(body)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func TestTheToolsBeginThroughTheContract(t *testing.T) {
	ctx := testCtx(t)
	logs := &logWatch{}
	prog, programURL := serveContractProgram(t)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindContract, URL: programURL, Logger: logs.logger()})
	base := serveProxy(t, Options{Upstream: up, Logger: logs.logger()})
	cl := dialFramed(t, ctx, base)

	// Refused: the program's JSON, then the finish; nothing has begun.
	scope, ans := begin(t, ctx, cl, `{"ok": false}`)
	if ans.Begun() || string(ans.Error) != registerRefusal {
		t.Fatalf("refused begin: %+v; want [1]%s", ans, registerRefusal)
	}
	if _, err := scope.Next(ctx); !isEOF(err) {
		t.Errorf("refused begin after its answer: %v; want the finish", err)
	}
	if got := recv(t, ctx, prog.registers); got != `{"arguments":{"ok": false}}` {
		t.Errorf("the program was sent %s", got)
	}

	// A later begin tries again. Channels sent before its Begun wait.
	scope, err := cl.Open(ctx, wire.BeginTools{Arguments: json.RawMessage(`{"ok":true}`)}.Append(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := recv(t, ctx, prog.registers); got != `{"arguments":{"ok":true}}` {
		t.Errorf("the program was sent %s", got)
	}
	early := &framed{cl: cl, scope: scope}
	list := early.start(t, ctx, "tools/list", "null")
	info := early.open(t, ctx, wire.Info{}.Append(nil))
	logs.waitFor(t, ctx, logAwaitBegun, 2)
	// A round trip to the program on the per-path form, which no begin
	// holds: had the framed tools/list not waited, it would have been
	// answered by now too.
	want(t, "per-path tools/list before Begun", result(t, perPath{base}.exchange(t, ctx, "tools/list", "null")), `"test_simple_text"`)
	if list.answered() || !stillOpen(info) {
		t.Fatal("a channel was answered before Begun")
	}
	if n := prog.mcp.count("tools/list"); n != 1 {
		t.Fatalf("the program was asked tools/list %d times before Begun, want once (per path)", n)
	}
	prog.let()

	p, err := scope.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ans, err := wire.DecodeBeginAnswer(p); err != nil || !ans.Begun() || string(ans.Answer) != registerAnswer {
		t.Fatalf("begin: %q (%v); want [0]%s", p, err, registerAnswer)
	}
	want(t, "tools/list sent before Begun", result(t, list.wait(t, ctx)), `"test_simple_text"`)
	if p, err := info.Next(ctx); err != nil || !bytesEqual(p, wire.InfoAnswer{}.Append(nil)) {
		t.Errorf("Info sent before Begun: %q, %v; want [1] (no DIVERGE.md)", p, err)
	}

	// Begun: the scope stays open and silent; a third begin is refused.
	_, ans = begin(t, ctx, cl, `{"ok":true}`)
	if ans.Begun() {
		t.Error("a begin after Begun succeeded")
	}
	if !scopeSilent(scope) {
		t.Error("the begun scope said something more")
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// scopeSilent reports whether a scope has said nothing more, without
// waiting.
func scopeSilent(s *wire.Scope) bool {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Next(done)
	return errors.Is(err, context.Canceled)
}

func TestInfo(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.md")
	writeFile(t, good, "---\ntitle: Weather tools\narguments:\n  type: object\n  properties:\n    city: {type: string}\nversion: 3\n---\n# Weather\n\nAsk about the weather.\n")
	bad := filepath.Join(dir, "bad.md")
	writeFile(t, bad, "---\ntitle: [never closed\n---\n# Broken\n")

	for _, c := range []struct {
		name, path string
		check      func(t *testing.T, a wire.InfoAnswer)
	}{
		{"a DIVERGE.md: [0] and the document", good, func(t *testing.T, a wire.InfoAnswer) {
			const doc = `{"title":"Weather tools","arguments":{"type":"object","properties":{"city":{"type":"string"}}},"version":3,"readme":"# Weather\n\nAsk about the weather.\n"}`
			if string(a.Document) != doc {
				t.Errorf("document:\n got %s\nwant %s", a.Document, doc)
			}
		}},
		{"no DIVERGE.md: [1]", filepath.Join(dir, "missing.md"), func(t *testing.T, a wire.InfoAnswer) {
			if !a.Missing() {
				t.Errorf("got %+v; want [1]", a)
			}
		}},
		{"a DIVERGE.md that does not parse: [2] and an error", bad, func(t *testing.T, a wire.InfoAnswer) {
			if a.Error == nil || !json.Valid(a.Error) || !strings.Contains(string(a.Error), `"kind"`) {
				t.Errorf("got %+v; want [2] and an error object", a)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			f := beginFramed(t, ctx, serveProxy(t, Options{Upstream: fixtureUpstream(t, nil), InfoPath: c.path}))
			ch := f.open(t, ctx, wire.Info{}.Append(nil))
			p, err := ch.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a, err := wire.DecodeInfoAnswer(p)
			if err != nil {
				t.Fatalf("%q: %v", p, err)
			}
			c.check(t, a)
			if _, err := ch.Next(ctx); !isEOF(err) {
				t.Errorf("after the answer: %v; want the finish", err)
			}
		})
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A Postgres or Daemon channel for no waiting connection is a bare
// finish; so are ids that do not decode.
func TestUnknownPairsAreBareFinishes(t *testing.T) {
	ctx := testCtx(t)
	logs := &logWatch{}
	f := beginFramed(t, ctx, serveProxy(t, Options{Upstream: fixtureUpstream(t, nil), Logger: logs.logger()}))
	for _, c := range []struct {
		name    string
		payload []byte
		log     string
	}{
		{"Postgres", wire.Postgres{ConnID: 1}.Append(nil), "a database channel for no waiting connection"},
		{"Daemon", wire.Daemon{ConnID: 0xfffffffe}.Append(nil), "a daemon channel for no waiting connection"},
		{"Postgres with a 3-byte id", []byte{0, 0, 0, 1}, "does not decode"},
		{"Daemon with a 5-byte id", []byte{2, 0, 0, 0, 1, 9}, "does not decode"},
		{"Daemon with no id", []byte{2}, "does not decode"},
	} {
		before := strings.Count(logs.String(), c.log)
		bareFinish(t, ctx, f.open(t, ctx, c.payload), c.name)
		if strings.Count(logs.String(), c.log) != before+1 {
			t.Errorf("%s: no log line saying %q", c.name, c.log)
		}
	}
	want(t, "the connection after them", result(t, f.exchange(t, ctx, "tools/list", "null")), `"test_simple_text"`)
}

// A tool blocked on the upstream delays none of 99 other exchanges on the
// same connection, is answered once it is let go, and nothing is left
// running when the connection ends.
func TestASlowToolNeverDelaysAnotherExchange(t *testing.T) {
	before := goleak.IgnoreCurrent() // runs last: after the connection and the upstream are closed
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	ctx := testCtx(t)
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	letGo := sync.OnceFunc(func() { close(release) })
	s := fixture.New(fixture.Options{})
	err := s.AddTools(&mcp.Tool{Name: "slow", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		arrived <- struct{}{}
		<-release
		return textResult("at last")
	}})
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: serveMCP(t, s)})
	t.Cleanup(letGo) // before the server's Close, should the test fail
	f := beginFramed(t, ctx, serveProxy(t, Options{Upstream: up}))

	slow := f.start(t, ctx, "tools/call", `{"name":"slow"}`)
	recv(t, ctx, arrived)
	asks := []struct{ method, params, want string }{
		{"tools/list", "null", `"slow"`},
		{"tools/call", `{"name":"test_simple_text"}`, "simple text"},
		{"resources/read", `{"uri":"test://static-text"}`, "static text resource"},
	}
	var others []pending
	for i := range 99 {
		a := asks[i%len(asks)]
		others = append(others, f.start(t, ctx, a.method, a.params))
	}
	for i, p := range others {
		want(t, fmt.Sprintf("exchange %d", i), result(t, p.wait(t, ctx)), asks[i%len(asks)].want)
	}
	if slow.answered() {
		t.Fatal("the slow tool answered before it was let go")
	}
	letGo()
	if got := toolText(t, result(t, slow.wait(t, ctx))); got != "at last" {
		t.Errorf("slow tool = %q", got)
	}
}

// recv takes one value from ch, or fails the test when ctx ends first.
func recv[T any](t *testing.T, ctx context.Context, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		var zero T
		t.Fatalf("nothing came on the channel: %v", ctx.Err())
		return zero
	}
}
