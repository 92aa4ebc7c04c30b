package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/wire"
)

// modernOnly is a server of 2026-07-28 alone: the fixture, sessionless,
// behind a refusal of initialize as such a server gives it (HTTP 400,
// -32022 naming the one revision it supports). It keeps each request's
// method and _meta, and closes listening once a subscriptions/listen has
// been acknowledged.
type modernOnly struct {
	next http.Handler

	mu        sync.Mutex
	methods   []string
	metas     map[string][]string // method → each request's _meta
	params    map[string][]string // method → each request's params
	listening chan struct{}
	once      sync.Once
}

func serveModernOnly(t *testing.T) (string, *modernOnly) {
	url, m, _ := serveModernFixture(t)
	return url, m
}

// serveModernFixture is serveModernOnly with its fixture server.
func serveModernFixture(t *testing.T) (string, *modernOnly, *mcp.Server) {
	srv := fixture.New(fixture.Options{})
	h := mcphttp.NewHandler(srv, mcphttp.Options{Sessionless: true})
	t.Cleanup(h.Close)
	m := &modernOnly{next: h, metas: map[string][]string{}, params: map[string][]string{}, listening: make(chan struct{})}
	return serveHandler(t, m), m, srv
}

func (m *modernOnly) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		m.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	msg, err := jsonrpc.Parse(body)
	if err != nil {
		http.Error(w, "unreadable", http.StatusBadRequest)
		return
	}
	meta, _ := jsonrpc.Lookup(msg.Params, "_meta")
	m.mu.Lock()
	m.methods = append(m.methods, msg.Method)
	m.metas[msg.Method] = append(m.metas[msg.Method], string(meta))
	m.params[msg.Method] = append(m.params[msg.Method], string(msg.Params))
	m.mu.Unlock()
	if msg.Method == "initialize" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(mcp.CodeUnsupportedProtocolVersion,
			"unsupported protocol version", map[string][]string{"supported": {"2026-07-28"}})))
		return
	}
	if msg.Method == "subscriptions/listen" {
		w = &ackWatch{ResponseWriter: w, m: m}
	}
	m.next.ServeHTTP(w, r)
}

func (m *modernOnly) sentParams(method string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.params[method]...)
}

func (m *modernOnly) sent(method string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.metas[method]...)
}

// ackWatch tells its modernOnly when the listen's acknowledgement is
// written.
type ackWatch struct {
	http.ResponseWriter
	m *modernOnly
}

func (a *ackWatch) Write(p []byte) (int, error) {
	n, err := a.ResponseWriter.Write(p)
	if bytes.Contains(p, []byte("notifications/subscriptions/acknowledged")) {
		a.m.once.Do(func() { close(a.m.listening) })
	}
	return n, err
}

func (a *ackWatch) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// An upstream of 2026-07-28 alone is spoken to without initialize: each
// exchange carries the revision, the proxy's identity and capabilities,
// and a log level, and its answer comes back byte for byte as before.
func TestASessionlessUpstreamIsReachedWithoutInitialize(t *testing.T) {
	ctx := testCtx(t)
	url, m := serveModernOnly(t)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: url + "/mcp"})
	base := serveProxy(t, Options{Upstream: up})
	f := beginFramed(t, ctx, base)
	want(t, "tools/list", result(t, f.exchange(t, ctx, "tools/list", "null")), `"test_simple_text"`)
	res := result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_simple_text","arguments":{}}`))
	want(t, "tools/call", res, `"resultType":"complete"`)
	want(t, "tools/call", res, `This is a simple text response for testing.`)
	if got := m.sent("initialize"); len(got) > 0 {
		t.Errorf("initialize was sent to a server that speaks only 2026-07-28 (%d times)", len(got))
	}
	for _, meta := range m.sent("tools/call") {
		for _, part := range []string{`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, `"io.modelcontextprotocol/clientInfo":{"name":"mcpgate-proxy"`,
			`"io.modelcontextprotocol/clientCapabilities":{"roots":{},"sampling":{},"elicitation":{}}`, `"io.modelcontextprotocol/logLevel":"debug"`} {
			if !strings.Contains(meta, part) {
				t.Errorf("tools/call went up with _meta %s, want %s in it", meta, part)
			}
		}
	}
}

// A sessionless server logs for a request only when it names a level: the
// proxy names the one logging/setLevel set (answered by the proxy), or
// debug before any, and a level the request names itself is kept. Log
// messages reach the notification channel before the call's answer.
func TestASessionlessUpstreamLogsAtTheLevelSet(t *testing.T) {
	ctx := testCtx(t)
	url, m := serveModernOnly(t)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: url + "/mcp"})
	base := serveProxy(t, Options{Upstream: up})
	f := beginFramed(t, ctx, base)
	sub := f.subscribe(t, ctx)
	awaitStreams(t, up, 1)
	result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_tool_with_logging","arguments":{}}`))
	note, err := sub.Next(ctx)
	if err != nil || !strings.Contains(string(note.Result), `"notifications/message"`) {
		t.Fatalf("the first notification: %s %v, want a log message before the answer", note.Result, err)
	}

	if res, rpcErr, err := up.Exchange(ctx, "logging/setLevel", json.RawMessage(`{"level":"error"}`)); err != nil || rpcErr != nil || string(res) != `{}` {
		t.Fatalf("logging/setLevel: %s %v %v, want {}", res, rpcErr, err)
	}
	if _, rpcErr, _ := up.Exchange(ctx, "logging/setLevel", json.RawMessage(`{"level":"loud"}`)); rpcErr == nil || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("logging/setLevel to an unknown level: %v, want -32602", rpcErr)
	}
	result(t, f.exchange(t, ctx, "tools/list", "null"))
	result(t, f.exchange(t, ctx, "tools/list", `{"_meta":{"io.modelcontextprotocol/logLevel":"info"}}`))
	lists := m.sent("tools/list")
	if n := len(lists); n < 2 || !strings.Contains(lists[n-2], `"io.modelcontextprotocol/logLevel":"error"`) ||
		!strings.Contains(lists[n-1], `"io.modelcontextprotocol/logLevel":"info"`) || strings.Contains(lists[n-1], `"error"`) {
		t.Errorf("tools/list went up with %q, want the level set, then the request's own", lists)
	}
	if got := m.sent("logging/setLevel"); len(got) > 0 {
		t.Errorf("logging/setLevel reached a server of 2026-07-28, which has no such method")
	}
}

// What a sessionless server's InputRequiredResult asks goes to the
// gateway as the server requests they stand for (tag 12), and the retry
// carries the answers: the exchange's answer is the complete result. With
// no gateway to ask, the answer is -32021 saying why.
func TestASessionlessUpstreamsInputRequestsAreAskedOfTheGateway(t *testing.T) {
	ctx := testCtx(t)
	url, _ := serveModernOnly(t)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: url + "/mcp"})
	base := serveProxy(t, Options{Upstream: up})
	f, g := beginAsked(t, ctx, base, `{"action":"accept","content":{"name":"Ada"}}`)
	res := result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_input_required_result_elicitation","arguments":{}}`))
	want(t, "the call after the gateway answered", res, `"resultType":"complete"`)
	want(t, "the call after the gateway answered", res, `Ada`)
	g.mu.Lock()
	if len(g.asked) != 1 {
		t.Errorf("the gateway was asked %d times, want once", len(g.asked))
	} else if m, err := jsonrpc.Parse(g.asked[0].Request); err != nil || m.Method != "elicitation/create" || !m.ID.IsValid() {
		t.Errorf("the gateway was asked %s, want elicitation/create with an id", g.asked[0].Request)
	}
	g.mu.Unlock()

	// A proxy with no framed connection has no gateway to ask.
	alone := serveProxy(t, Options{Upstream: newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: url + "/mcp"})})
	resp := perPath{alone}.exchange(t, ctx, "tools/call", `{"name":"test_input_required_result_elicitation","arguments":{}}`)
	if resp.Error == nil || resp.Error.Code != mcp.CodeMissingRequiredCapability || !strings.Contains(resp.Error.Message, "elicitation/create") {
		t.Errorf("the same call with no gateway to ask: %s%s, want -32021 naming elicitation/create", resp.Result, errorText(resp))
	}
}

// A sessionless server tells of list changes only on a
// subscriptions/listen: the proxy keeps one open, and a change reaches
// the notification channels as a session's would.
func TestASessionlessUpstreamsListChangesReachTheNotificationChannels(t *testing.T) {
	ctx := testCtx(t)
	url, m := serveModernOnly(t)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: url + "/mcp"})
	base := serveProxy(t, Options{Upstream: up})
	f := beginFramed(t, ctx, base)
	sub := f.subscribe(t, ctx)
	awaitStreams(t, up, 1)
	result(t, f.exchange(t, ctx, "tools/list", "null"))
	select {
	case <-m.listening:
	case <-ctx.Done():
		t.Fatal("the proxy opened no subscriptions/listen")
	}
	result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_trigger_tool_change","arguments":{}}`))
	for {
		note, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("no tools/list_changed: %v", err)
		}
		if strings.Contains(string(note.Result), "notifications/subscriptions/acknowledged") {
			t.Fatalf("the proxy's own listen acknowledgement reached the gateway: %s", note.Result)
		}
		if strings.Contains(string(note.Result), `"notifications/tools/list_changed"`) {
			break
		}
	}
	if metas := m.sent("subscriptions/listen"); len(metas) != 1 {
		t.Errorf("%d listens opened, want 1", len(metas))
	}
}

// An era the configuration names is the era spoken: session initializes
// (a server of 2026-07-28 alone is then unreachable, and says so).
func TestTheUpstreamEraCanBeChosen(t *testing.T) {
	ctx := testCtx(t)
	url, m := serveModernOnly(t)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: url + "/mcp", Era: mcp.EraSession})
	_, _, err := up.Exchange(ctx, "tools/list", nil)
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "initialize") {
		t.Fatalf("session era against a 2026-07-28 server: %v, want unreachable at initialize", err)
	}
	if got := m.sent("server/discover"); len(got) > 0 {
		t.Errorf("server/discover was sent though the era was chosen")
	}
	modern := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: serveMCP(t, fixture.New(fixture.Options{})), Era: mcp.EraSessionless})
	if _, _, err := modern.Exchange(ctx, "tools/list", nil); err == nil {
		t.Errorf("sessionless era against a server of the 2025 era alone: no error")
	}
}

// A tools/call to a sessionless server over HTTP carries the Mcp-Param
// headers the tool's x-mcp-header annotations ask for, which the server
// checks against the arguments: learnt from a tools/list that passed, or
// from a listing of the proxy's own when the call comes first.
func TestASessionlessUpstreamsCallsCarryTheirParamHeaders(t *testing.T) {
	const call = `{"name":"test_header_params","arguments":{"region":"eu-west","priority":3,"verbose":true,"query":"q"}}`
	for _, tc := range []struct {
		rule   string
		listed bool
	}{{"after a tools/list", true}, {"as the first exchange", false}} {
		t.Run(tc.rule, func(t *testing.T) {
			ctx := testCtx(t)
			url, m := serveModernOnly(t)
			base := serveProxy(t, Options{Upstream: newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: url + "/mcp"})})
			f := beginFramed(t, ctx, base)
			if tc.listed {
				result(t, f.exchange(t, ctx, "tools/list", "null"))
			}
			res := result(t, f.exchange(t, ctx, "tools/call", call))
			want(t, "test_header_params", res, `header params: {\"region\":\"eu-west\"`)
			if n := len(m.sent("tools/list")); n != 1 {
				t.Errorf("tools/list was sent %d times, want once", n)
			}
		})
	}
}

// Over stdio as over HTTP: a server that speaks 2026-07-28 is spoken to
// sessionless, its log messages reach the notification channel before the
// call's answer, and its input requests are asked of the gateway.
func TestASessionlessStdioUpstreamIsSpokenToSessionless(t *testing.T) {
	ctx := testCtx(t)
	cmd, env := sessionlessFixtureCommand()
	logs := &logWatch{}
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindStdio, Command: cmd, Env: env, Logger: logs.logger()})
	base := serveProxy(t, Options{Upstream: up})
	f, _ := beginAsked(t, ctx, base, `{"action":"accept","content":{"name":"Ada"}}`)
	sub := f.subscribe(t, ctx)
	awaitStreams(t, up, 1)
	result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_tool_with_logging","arguments":{}}`))
	if note, err := sub.Next(ctx); err != nil || !strings.Contains(string(note.Result), `"notifications/message"`) {
		t.Fatalf("the first notification: %s %v, want a log message before the answer", note.Result, err)
	}
	res := result(t, f.exchange(t, ctx, "tools/call", `{"name":"test_input_required_result_elicitation","arguments":{}}`))
	want(t, "the call after the gateway answered", res, `Ada`)
	if !strings.Contains(logs.String(), `"era":"sessionless"`) {
		t.Errorf("the proxy's log does not say the session is sessionless:\n%s", logs)
	}
}

// resources/subscribe to a sessionless server is the proxy's to answer:
// its listen is opened again with the URI (answered once that listen is
// acknowledged), an update of the resource reaches the notification
// channels, and unsubscribe opens it again without.
func TestASessionlessUpstreamsSubscriptionsFollowTheListen(t *testing.T) {
	ctx := testCtx(t)
	url, m, srv := serveModernFixture(t)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: url + "/mcp"})
	base := serveProxy(t, Options{Upstream: up})
	f := beginFramed(t, ctx, base)
	sub := f.subscribe(t, ctx)
	awaitStreams(t, up, 1)
	awaitStreams(t, up, 1)
	result(t, f.exchange(t, ctx, "tools/list", "null"))
	select { // the listen before the subscription
	case <-m.listening:
	case <-ctx.Done():
		t.Fatal("the proxy opened no subscriptions/listen")
	}
	subscribe := `{"uri":"` + fixture.WatchedResource + `"}`
	if res := result(t, f.exchange(t, ctx, "resources/subscribe", subscribe)); string(res) != `{}` {
		t.Fatalf("resources/subscribe = %s, want {}", res)
	}
	withURI := `"resourceSubscriptions":["` + fixture.WatchedResource + `"]`
	listens := m.sentParams("subscriptions/listen")
	if n := len(listens); n < 2 || !strings.Contains(listens[n-1], withURI) {
		t.Fatalf("listens %q: want one opened again for the subscription", listens)
	}
	srv.ResourceUpdated(fixture.WatchedResource)
	for {
		note, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("no notifications/resources/updated: %v", err)
		}
		if strings.Contains(string(note.Result), `"notifications/resources/updated"`) {
			want(t, "the update", note.Result, fixture.WatchedResource)
			break
		}
	}
	if res := result(t, f.exchange(t, ctx, "resources/unsubscribe", subscribe)); string(res) != `{}` {
		t.Fatalf("resources/unsubscribe = %s, want {}", res)
	}
	if listens := m.sentParams("subscriptions/listen"); len(listens) < 3 || strings.Contains(listens[len(listens)-1], "resourceSubscriptions") {
		t.Errorf("listens after the unsubscribe %q, want a third without the URI", listens)
	}
	if got := m.sent("resources/subscribe"); len(got) > 0 {
		t.Errorf("resources/subscribe reached a server of 2026-07-28, which has no such method")
	}
}

// beginAsked begins a framed connection to the proxy at base whose
// gateway answers every server request (tag 12) with answer.
func beginAsked(t *testing.T, ctx context.Context, base, answer string) (*framed, *askedGateway) {
	t.Helper()
	g := &askedGateway{answer: wire.Response{Result: json.RawMessage(answer)}.Append(nil)}
	cl, err := wire.Dial(ctx, base+"/", &wire.ClientOptions{Channels: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	scope, ans := begin(t, ctx, cl, "null")
	return &framed{cl: cl, scope: scope, begun: ans}, g
}
