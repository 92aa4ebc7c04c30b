// client_sessionless_test.go pins how the client learns a server's era
// (mcp.Client.Connect) over Streamable HTTP, against real servers of both
// eras — the fixture, sessionless and not, and the official Go SDK in its
// stateless mode — and what it sends once it speaks 2026-07-28: the
// revision's headers, the _meta of every request, no session.

package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// headerLog keeps the headers and bodies of the POSTs a server received.
type headerLog struct {
	mu    sync.Mutex
	posts []http.Header
}

func (l *headerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			l.mu.Lock()
			l.posts = append(l.posts, r.Header.Clone())
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (l *headerLog) last() http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.posts[len(l.posts)-1]
}

func serveForEra(t *testing.T, h http.Handler) (string, *headerLog) {
	t.Helper()
	l := &headerLog{}
	srv := httptest.NewServer(l.wrap(h))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", l
}

func connectEra(ctx context.Context, t *testing.T, url string, era mcp.Era) (*mcp.Client, mcp.Era, error) {
	t.Helper()
	conn, err := DialStreamable(ctx, url, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "era-test", Version: "1"},
		Capabilities: json.RawMessage(`{"elicitation":{}}`)})
	t.Cleanup(func() { _ = c.Close() })
	got, err := c.Connect(ctx, era)
	return c, got, err
}

func TestTheClientLearnsEachServersEra(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	modern := NewHandler(fixture.New(fixture.Options{}), Options{Sessionless: true})
	legacy := NewHandler(fixture.New(fixture.Options{}), Options{})
	t.Cleanup(func() { modern.Close(); legacy.Close() })
	sdkServer := newSDKServer()
	sdkStateless := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return sdkServer }, &sdk.StreamableHTTPOptions{Stateless: true})
	sdkStateful := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return sdkServer }, nil)
	for _, c := range []struct {
		rule    string
		handler http.Handler
		want    mcp.Era
		tool    string
	}{
		{"a server that answers server/discover is spoken to sessionless", modern, mcp.EraSessionless, `{"name":"test_simple_text","arguments":{}}`},
		{"a 2025-era server gets an initialize", legacy, mcp.EraSession, `{"name":"test_simple_text","arguments":{}}`},
		{"the Go SDK in stateless mode is spoken to sessionless", sdkStateless, mcp.EraSessionless, `{"name":"echo","arguments":{"text":"hi"}}`},
		{"the Go SDK with sessions discovers only session revisions, and gets an initialize", sdkStateful, mcp.EraSession, `{"name":"echo","arguments":{"text":"hi"}}`},
	} {
		t.Run(c.rule, func(t *testing.T) {
			url, log := serveForEra(t, c.handler)
			client, era, err := connectEra(ctx, t, url, mcp.EraAuto)
			if err != nil || era != c.want {
				t.Fatalf("Connect: era %q, %v; want %q", era, err, c.want)
			}
			if client.Sessionless() != (c.want == mcp.EraSessionless) {
				t.Errorf("Sessionless() = %v", client.Sessionless())
			}
			res, err := client.Call(ctx, "tools/call", json.RawMessage(c.tool))
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			if !strings.Contains(string(res), `"content"`) {
				t.Errorf("tools/call: %s", res)
			}
			h := log.last()
			if c.want == mcp.EraSessionless {
				name, _ := jsonrpc.LookupString(json.RawMessage(c.tool), "name")
				for k, v := range map[string]string{HeaderProtocolVersion: mcp.Version20260728, HeaderMethod: "tools/call", HeaderName: name, HeaderSessionID: ""} {
					if got := h.Get(k); got != v {
						t.Errorf("%s: %q, want %q", k, got, v)
					}
				}
			} else if h.Get(HeaderSessionID) == "" || h.Get(HeaderMethod) != "" {
				t.Errorf("a session's call went with session %q and Mcp-Method %q", h.Get(HeaderSessionID), h.Get(HeaderMethod))
			}
		})
	}
}

// A sessionless call carries the revision, the client and its
// capabilities in _meta; the caller's own _meta members stay, and a
// revision the caller put there is replaced by the one spoken.
func TestASessionlessRequestCarriesItsMeta(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	var got json.RawMessage
	srv := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "meta", Version: "1"}})
	if err := srv.AddTools(&mcp.Tool{Name: "meta", Handler: func(_ context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		got, _ = jsonrpc.Lookup(r.Params, "_meta")
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}})
	}}); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(srv, Options{Sessionless: true})
	t.Cleanup(h.Close)
	url, _ := serveForEra(t, h)
	client, _, err := connectEra(ctx, t, url, mcp.EraSessionless)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Call(ctx, "tools/call", json.RawMessage(`{"name":"meta","_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"1999-01-01","x.example/k":"v"}}`)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`,
		`"io.modelcontextprotocol/clientInfo":{"name":"era-test"`, `"progressToken":7`, `"x.example/k":"v"`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("_meta %s lacks %s", got, want)
		}
	}
	if strings.Contains(string(got), "1999-01-01") {
		t.Errorf("the caller's revision went upstream: %s", got)
	}
}

// An answer that says nothing of the protocol leaves the era unknown, so
// that the caller tries again rather than settle on the wrong one.
func TestAProbeThatProvesNothingIsAnError(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway} {
		url, _ := serveForEra(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", status) }))
		_, era, err := connectEra(ctx, t, url, mcp.EraAuto)
		if !errors.Is(err, mcp.ErrInconclusive) {
			t.Errorf("HTTP %d: era %q, err %v; want ErrInconclusive", status, era, err)
		}
	}
	// A plain 400 is a 2025-era refusal: initialize comes next.
	var initialized bool
	url, _ := serveForEra(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct{ Method string }
		_ = json.NewDecoder(r.Body).Decode(&m)
		if m.Method == "initialize" {
			initialized = true
		}
		http.Error(w, "bad request", http.StatusBadRequest)
	}))
	if _, _, err := connectEra(ctx, t, url, mcp.EraAuto); err == nil || !initialized {
		t.Errorf("after a plain 400 to server/discover: initialize sent %v (err %v)", initialized, err)
	}
}

// A tool's Mcp-Param headers go out as the relay put them in the
// context, and a sessionless server checks them against the body.
// sessionlessFixture is a client speaking 2026-07-28 to the fixture, and
// the log of what the fixture received.
func sessionlessFixture(ctx context.Context, t *testing.T) (*mcp.Client, *headerLog) {
	t.Helper()
	h := NewHandler(fixture.New(fixture.Options{}), Options{Sessionless: true})
	t.Cleanup(h.Close)
	url, log := serveForEra(t, h)
	client, _, err := connectEra(ctx, t, url, mcp.EraSessionless)
	if err != nil {
		t.Fatal(err)
	}
	return client, log
}

func TestOutgoingParamHeadersReachTheServer(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	client, log := sessionlessFixture(ctx, t)
	args := json.RawMessage(`{"region":"Hello, 世界","priority":3,"query":"q"}`)
	ps, err := mcp.HeaderParams(json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	withHeaders := &mcp.Outbound{Method: "tools/call", Params: json.RawMessage(`{"name":"test_header_params","arguments":` + string(args) + `}`), Headers: mcp.ParamHeaders(ps, args)}
	if _, err := client.Send(ctx, withHeaders); err != nil {
		t.Fatalf("with its headers: %v", err)
	}
	if got := log.last().Get("Mcp-Param-Region"); got != "=?base64?SGVsbG8sIOS4lueVjA==?=" {
		t.Errorf("Mcp-Param-Region %q", got)
	}
	var je *jsonrpc.Error
	if _, err := client.Call(ctx, "tools/call", json.RawMessage(`{"name":"test_header_params","arguments":`+string(args)+`}`)); !errors.As(err, &je) || je.Code != mcp.CodeHeaderMismatch {
		t.Errorf("without them: %v, want -32020", err)
	}
}

// A modern server that refuses the revision with -32022 while listing it
// as supported is asked again, as the revision says, not given up on.
func TestAnUnsupportedVersionNamingOursIsRetried(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	modern := NewHandler(fixture.New(fixture.Options{}), Options{Sessionless: true})
	t.Cleanup(modern.Close)
	var refused atomic.Bool
	url, _ := serveForEra(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !refused.Swap(true) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}`))
			return
		}
		modern.ServeHTTP(w, r)
	}))
	if _, era, err := connectEra(ctx, t, url, mcp.EraAuto); err != nil || era != mcp.EraSessionless {
		t.Fatalf("Connect: %q %v, want sessionless after one retry", era, err)
	}
}

// Once a session is open, a server/discover is a request of that session:
// a server that speaks both eras answers it, and the connection stays in
// the session era (a relay passes such a request on for its own caller).
func TestADiscoverOnASessionLeavesItsEra(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	both := NewHandler(fixture.New(fixture.Options{}), Options{Sessionless: true})
	t.Cleanup(both.Close)
	url, log := serveForEra(t, both)
	c, era, err := connectEra(ctx, t, url, mcp.EraSession)
	if err != nil || era != mcp.EraSession {
		t.Fatalf("Connect: %q %v", era, err)
	}
	if _, err := c.Call(ctx, "server/discover", nil); err != nil {
		t.Logf("server/discover on the session: %v", err) // the fixture may refuse it; what matters is what follows
	}
	if h := log.last(); h.Get(HeaderSessionID) == "" || h.Get(HeaderProtocolVersion) == mcp.Version20260728 {
		t.Errorf("server/discover went without the session: %v", h)
	}
	if _, err := c.Call(ctx, "tools/list", nil); err != nil {
		t.Fatalf("tools/list after a server/discover on the session: %v", err)
	}
	if c.Sessionless() {
		t.Error("the client took a discover on its session for the probe")
	}
	if h := log.last(); h.Get(HeaderSessionID) == "" || h.Get(HeaderProtocolVersion) == mcp.Version20260728 {
		t.Errorf("tools/list went without the session: %v", h)
	}
}

// A connection makes each Mcp-Name value once and keeps at most
// maxNameHeaders of them; a name that is not plain ASCII is encoded.
func TestNameHeadersAreMadeOnceAndBounded(t *testing.T) {
	c := &StreamableConn{}
	first := c.nameHeader([]byte("search"))
	if again := c.nameHeader([]byte("search")); &again[0] != &first[0] || first[0] != "search" {
		t.Errorf("a name called again made a new value: %q", again)
	}
	if n := testing.AllocsPerRun(100, func() { c.nameHeader([]byte("search")) }); n != 0 {
		t.Errorf("a kept name allocates %v times", n)
	}
	if v := c.nameHeader([]byte("café")); v[0] != mcp.EncodeHeaderValue("café") || v[0] == "café" {
		t.Errorf("a non-ASCII name's header %q", v[0])
	}
	for i := range 3 * maxNameHeaders {
		if v := c.nameHeader([]byte(fmt.Sprint("tool-", i))); v[0] != fmt.Sprint("tool-", i) {
			t.Fatalf("name %d's header %q", i, v[0])
		}
	}
	if len(c.nameHdr) > maxNameHeaders {
		t.Errorf("%d names kept, over %d", len(c.nameHdr), maxNameHeaders)
	}
}

// A sessionless POST's header is made once per method and name and then
// shared: each POST still carries its own method and name, and the
// revision it speaks.
func TestASessionlessPOSTsSharedHeaderNamesItsOwnCall(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	client, log := sessionlessFixture(ctx, t)
	for _, call := range []struct{ method, params, name string }{
		{"tools/call", `{"name":"test_simple_text","arguments":{}}`, "test_simple_text"},
		{"tools/call", `{"name":"test_image_content","arguments":{}}`, "test_image_content"},
		{"tools/call", `{"name":"test_simple_text","arguments":{}}`, "test_simple_text"},
		{"prompts/get", `{"name":"test_simple_prompt"}`, "test_simple_prompt"},
		{"tools/list", `{}`, ""},
		{"tools/call", `{"name":"test_simple_text","arguments":{}}`, "test_simple_text"},
	} {
		if _, err := client.Call(ctx, call.method, json.RawMessage(call.params)); err != nil {
			t.Fatalf("%s %s: %v", call.method, call.params, err)
		}
		got := log.last()
		if got.Get(HeaderMethod) != call.method || got.Get(HeaderName) != call.name || got.Get(HeaderProtocolVersion) != mcp.Version20260728 {
			t.Errorf("%s %s sent %s %q, %s %q, %s %q", call.method, call.params, HeaderMethod, got.Get(HeaderMethod),
				HeaderName, got.Get(HeaderName), HeaderProtocolVersion, got.Get(HeaderProtocolVersion))
		}
	}
}
