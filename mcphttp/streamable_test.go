// streamable_test.go pins the Streamable HTTP server transport against the
// rules of docs/spec §3, over real loopback sockets: the HTTP-level rules
// (406, 415, 405, 413, 404, 400), sessions and the identity they are bound
// to, batches, the answer's media type, the GET stream and its resumption,
// concurrency within a session, the reaper and the session cap, byte
// fidelity of results, and the official Go SDK client as a peer.
//
// Every identifier here starts with "st" (or is a TestStreamable… test) so
// that it cannot collide with the other transports' tests in this package.

package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/mcpgate/mcpgate/fixture"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
)

// stLeakCheck fails the test if it leaves goroutines behind. Called first,
// its cleanup runs after every other one.
func stLeakCheck(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// stContext bounds a test's waits, so a broken promise fails the test
// instead of hanging it.
func stContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// stWithIdentity stands in for authentication: X-Test-Identity names the
// caller, as a bearer token would.
func stWithIdentity(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if who := r.Header.Get("X-Test-Identity"); who != "" {
			r = r.WithContext(mcp.WithIdentity(r.Context(), mcp.Identity{Subject: who}))
		}
		h.ServeHTTP(w, r)
	})
}

// stRawResult is a tool result the transport must carry byte for byte:
// pretty-printed with newlines, a 30-digit integer no float64 holds, _meta,
// isError, structuredContent and a field no schema knows.
const stRawResult = `{
  "content": [
    {"type": "text", "text": "exact \u00e9 bytes", "x-unknown": {"deep": [1, 2.50, -0e0]}}
  ],
  "structuredContent": {"big": 123456789012345678901234567890, "f": 1.0},
  "isError": false,
  "_meta": {"trace": "abc", "n": 100000000000000000000000000001},
  "vendorField": null
}`

// stProbe lets a test watch and steer the tools of stNewServer.
type stProbe struct {
	started   chan string   // a blocking tool began (its name)
	cancelled chan string   // a blocking tool saw its context end
	release   chan struct{} // closed to let "slow" finish
}

// stNewServer is a small catalogue: echo (with an input schema), progress,
// sample (a server-to-client request), block and slow (which wait), raw
// (stRawResult) and a subscribable resource.
func stNewServer(t testing.TB) (*mcp.Server, *stProbe) {
	t.Helper()
	p := &stProbe{started: make(chan string, 64), cancelled: make(chan string, 64), release: make(chan struct{})}
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "streamable-test", Version: "0"}})
	text := func(s string) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(s)}})
	}
	err := s.AddTools(
		&mcp.Tool{Name: "echo",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
				s, _ := jsonrpc.LookupString(args, "text")
				return text("echo: " + s)
			}},
		&mcp.Tool{Name: "progress", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			for _, n := range []float64{1, 2, 3} {
				if err := r.Progress(ctx, n, 3, ""); err != nil {
					return nil, err
				}
			}
			return text("progressed")
		}},
		&mcp.Tool{Name: "sample", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			res, err := r.Call(ctx, "sampling/createMessage",
				json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`))
			if err != nil {
				return nil, err
			}
			content, _ := jsonrpc.Lookup(res, "content")
			s, _ := jsonrpc.LookupString(content, "text")
			return text("sampled: " + s)
		}},
		&mcp.Tool{Name: "block", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			p.started <- "block"
			<-ctx.Done()
			p.cancelled <- "block"
			return nil, ctx.Err()
		}},
		&mcp.Tool{Name: "slow", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			p.started <- "slow"
			select {
			case <-p.release:
				return text("slow done")
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}},
		&mcp.Tool{Name: "raw", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(stRawResult), nil
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	err = s.AddResources(&mcp.Resource{URI: "mem://watched", Name: "watched",
		Read: func(_ context.Context, _ *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
			return mcp.Result(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "v")}})
		}})
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// stEnv is a Handler in front of an mcp.Server on a loopback test server,
// behind Guard and the test's stand-in for authentication.
type stEnv struct {
	t      *testing.T
	server *mcp.Server
	h      *Handler
	srv    *httptest.Server
	url    string
	client *http.Client
}

// newStEnv serves s; wrap adds test middleware outside everything else.
func newStEnv(t *testing.T, s *mcp.Server, opts Options, wrap ...func(http.Handler) http.Handler) *stEnv {
	t.Helper()
	h := NewHandler(s, opts)
	var handler http.Handler = stWithIdentity(Guard(h, GuardOptions{}))
	for _, w := range wrap {
		handler = w(handler)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close) // runs first: ends the streams srv.Close would wait for
	return &stEnv{t: t, server: s, h: h, srv: srv, url: srv.URL + "/mcp", client: srv.Client()}
}

// stHeaders is what a well-behaved client sends (the SDKs' Accept and
// Content-Type, and the session id when there is one), changed by key,
// value pairs; an empty value removes the header.
func stHeaders(sid string, kv ...string) http.Header {
	h := http.Header{}
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Content-Type", "application/json")
	if sid != "" {
		h.Set(HeaderSessionID, sid)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			h.Del(kv[i])
		} else {
			h.Set(kv[i], kv[i+1])
		}
	}
	return h
}

// stReply is one HTTP answer, read to the end.
type stReply struct {
	status int
	header http.Header
	body   []byte
}

// do makes one request and reads the whole answer. A GET answered with a
// stream (which never ends by itself) is returned without its body.
func (e *stEnv) do(method string, hdr http.Header, body string) stReply {
	e.t.Helper()
	resp := e.open(method, hdr, body)
	if method == http.MethodGet && resp.Header.Get("Content-Type") == "text/event-stream" {
		_ = resp.Body.Close()
		return stReply{resp.StatusCode, resp.Header, nil}
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		e.t.Fatalf("%s: reading the answer: %v", method, err)
	}
	return stReply{resp.StatusCode, resp.Header, b}
}

// open makes a request and returns the response with its body unread (a
// stream); the body is closed when the test ends, if not before.
func (e *stEnv) open(method string, hdr http.Header, body string) *http.Response {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.url, rd)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	req.Header = hdr
	resp, err := e.client.Do(req)
	if err != nil {
		cancel()
		e.t.Fatalf("%s: %v", method, err)
	}
	e.t.Cleanup(func() {
		_ = resp.Body.Close()
		cancel()
	})
	return resp
}

// post sends one JSON-RPC message on session sid.
func (e *stEnv) post(sid, body string, kv ...string) stReply {
	e.t.Helper()
	return e.do(http.MethodPost, stHeaders(sid, kv...), body)
}

// openGet opens the session's standalone stream and checks it is one.
func (e *stEnv) openGet(sid string, kv ...string) (*http.Response, *sse.Reader) {
	e.t.Helper()
	resp := e.open(http.MethodGet, stHeaders(sid, append([]string{"Accept", "text/event-stream", "Content-Type", ""}, kv...)...), "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("GET = %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return resp, sse.NewReader(resp.Body, 0)
}

func stInitBody(version string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{"sampling":{}},"clientInfo":{"name":"st","version":"1"}}}`
}

func stCallBody(id int, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
}

const (
	stPing        = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	stInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// initialize opens a session as identity ("" for anonymous) at version and
// sends notifications/initialized, as clients do.
func (e *stEnv) initialize(identity, version string) string {
	e.t.Helper()
	r := e.post("", stInitBody(version), "X-Test-Identity", identity)
	sid := r.header.Get(HeaderSessionID)
	if r.status != http.StatusOK || sid == "" {
		e.t.Fatalf("initialize = %d, session %q: %s", r.status, sid, r.body)
	}
	if r := e.post(sid, stInitialized, "X-Test-Identity", identity); r.status != http.StatusAccepted {
		e.t.Fatalf("notifications/initialized = %d: %s", r.status, r.body)
	}
	return sid
}

// stMessage parses one JSON-RPC message.
func stMessage(t *testing.T, b []byte) *jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.Parse(b)
	if err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %s", err, b)
	}
	return m
}

// stErrorCode is the JSON-RPC error code of an answer, 0 for a result.
func stErrorCode(t *testing.T, m *jsonrpc.Message) int64 {
	t.Helper()
	if m.Error == nil {
		return 0
	}
	e, err := m.ErrorObject()
	if err != nil {
		t.Fatalf("bad error object %s: %v", m.Error, err)
	}
	return e.Code
}

// stText is the first text block of a tools/call result.
func stText(t *testing.T, m *jsonrpc.Message) string {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("not a tools/call result: %s (%v)", m.Result, err)
	}
	return res.Content[0].Text
}

// stEvents reads every event of an event-stream body.
func stEvents(t *testing.T, body []byte) []sse.Event {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(body), 0)
	var out []sse.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("reading events: %v in %q", err, body)
		}
		out = append(out, ev)
	}
}

// stNextMessage reads the next event of a stream as a JSON-RPC message.
func stNextMessage(t *testing.T, r *sse.Reader) (sse.Event, *jsonrpc.Message) {
	t.Helper()
	ev, err := r.Next()
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return ev, stMessage(t, ev.Data)
}

// stWaitFor polls cond until it holds or the deadline passes. It is for
// conditions with no event to wait on (a background reaper's effect).
func stWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func stReceive[T any](t *testing.T, ctx context.Context, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestStreamableHTTPRules(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	const unknown = "00000000000000000000000000000000"

	type row struct {
		name   string
		method string
		header http.Header
		body   string
		status int
		code   int64  // JSON-RPC error code in the body; 0: none expected
		allow  string // Allow header expected
		empty  bool   // the body must be empty
	}
	rows := []row{
		{name: "POST with only application/json in Accept is 406", method: "POST", header: stHeaders(sid, "Accept", "application/json"), body: stPing, status: 406, code: -32600},
		{name: "POST with only text/event-stream in Accept is 406", method: "POST", header: stHeaders(sid, "Accept", "text/event-stream"), body: stPing, status: 406, code: -32600},
		{name: "POST with */* alone in Accept is 406", method: "POST", header: stHeaders(sid, "Accept", "*/*"), body: stPing, status: 406, code: -32600},
		{name: "POST with wildcards for both types is 406", method: "POST", header: stHeaders(sid, "Accept", "application/*, text/*"), body: stPing, status: 406, code: -32600},
		{name: "POST without Accept is 406", method: "POST", header: stHeaders(sid, "Accept", ""), body: stPing, status: 406, code: -32600},
		{name: "POST with both types in reverse order is served", method: "POST", header: stHeaders(sid, "Accept", "text/event-stream, application/json"), body: stPing, status: 200},
		{name: "POST with both types and parameters is served", method: "POST", header: stHeaders(sid, "Accept", "application/json;q=0.9, text/event-stream;q=0.8"), body: stPing, status: 200},
		{name: "Content-Type text/plain is 415", method: "POST", header: stHeaders(sid, "Content-Type", "text/plain"), body: stPing, status: 415, code: -32600},
		{name: "Content-Type application/jsonx is 415", method: "POST", header: stHeaders(sid, "Content-Type", "application/jsonx"), body: stPing, status: 415, code: -32600},
		{name: "missing Content-Type is 415", method: "POST", header: stHeaders(sid, "Content-Type", ""), body: stPing, status: 415, code: -32600},
		{name: "Content-Type with a charset parameter is served", method: "POST", header: stHeaders(sid, "Content-Type", "application/json; charset=utf-8"), body: stPing, status: 200},
		{name: "PUT is 405 with Allow", method: "PUT", header: stHeaders(sid), body: stPing, status: 405, allow: "GET, POST, DELETE"},
		{name: "PATCH is 405 with Allow", method: "PATCH", header: stHeaders(sid), body: stPing, status: 405, allow: "GET, POST, DELETE"},
		{name: "unknown session id on POST is 404", method: "POST", header: stHeaders(unknown), body: stPing, status: 404, code: -32600},
		{name: "unknown session id on GET is 404", method: "GET", header: stHeaders(unknown, "Accept", "text/event-stream"), status: 404},
		{name: "unknown session id on DELETE is 404", method: "DELETE", header: stHeaders(unknown), status: 404},
		{name: "missing session id on a request is 400", method: "POST", header: stHeaders(""), body: stPing, status: 400, code: -32600},
		{name: "missing session id on a notification is 400", method: "POST", header: stHeaders(""), body: stInitialized, status: 400},
		{name: "missing session id on GET is 400", method: "GET", header: stHeaders("", "Accept", "text/event-stream"), status: 400},
		{name: "missing session id on DELETE is 400", method: "DELETE", header: stHeaders(""), status: 400},
		{name: "tools/call before any initialize is 400", method: "POST", header: stHeaders(""), body: stCallBody(2, "echo", `{"text":"x"}`), status: 400},
		{name: "tools/call on an unknown session path is 404", method: "POST", header: stHeaders(unknown), body: stCallBody(2, "echo", `{"text":"x"}`), status: 404},
		{name: "unsupported MCP-Protocol-Version is 400", method: "POST", header: stHeaders(sid, HeaderProtocolVersion, "1999-01-01"), body: stPing, status: 400, code: -32600},
		{name: "unsupported MCP-Protocol-Version on GET is 400", method: "GET", header: stHeaders(sid, "Accept", "text/event-stream", HeaderProtocolVersion, "2026-13-01"), status: 400},
		{name: "invalid JSON is 400 with -32700 and id null", method: "POST", header: stHeaders(sid), body: `{"jsonrpc":"2.0","id":1,"method":`, status: 400, code: -32700},
		{name: "a notification is 202 with an empty body", method: "POST", header: stHeaders(sid), body: `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, status: 202, empty: true},
		{name: "a response is 202 with an empty body", method: "POST", header: stHeaders(sid), body: `{"jsonrpc":"2.0","id":"nobody-asked","result":{}}`, status: 202, empty: true},
		{name: "an error response is 202 with an empty body", method: "POST", header: stHeaders(sid), body: `{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}`, status: 202, empty: true},
		{name: "a second initialize on a session is 400", method: "POST", header: stHeaders(sid), body: stInitBody(mcp.Version20251125), status: 400, code: -32600},
		{name: "GET without text/event-stream in Accept is 406", method: "GET", header: stHeaders(sid, "Accept", "application/json"), status: 406},
		{name: "GET with */* alone is 406", method: "GET", header: stHeaders(sid, "Accept", "*/*"), status: 406},
	}
	for _, v := range mcp.SupportedVersions {
		rows = append(rows, row{name: "MCP-Protocol-Version " + v + " is accepted whatever was negotiated",
			method: "POST", header: stHeaders(sid, HeaderProtocolVersion, v), body: stPing, status: 200})
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.header, tc.body)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.allow != "" && r.header.Get("Allow") != tc.allow {
				t.Errorf("Allow = %q, want %q", r.header.Get("Allow"), tc.allow)
			}
			if tc.empty && len(r.body) != 0 {
				t.Errorf("body = %q, want none", r.body)
			}
			if tc.code != 0 {
				m := stMessage(t, r.body)
				if got := stErrorCode(t, m); got != tc.code {
					t.Errorf("error code = %d, want %d: %s", got, tc.code, r.body)
				}
				if m.ID != nil {
					t.Errorf("error id = %s, want null", m.ID)
				}
			}
		})
	}
	if e.h.Sessions() != 1 {
		t.Errorf("Sessions = %d after the refusals, want 1", e.h.Sessions())
	}
}

func TestStreamableBodyLimit(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	const limit = 1 << 10
	e := newStEnv(t, s, Options{MaxBodyBytes: limit})
	sid := e.initialize("", mcp.Version20251125)
	// pad makes a ping of exactly n bytes. A server that truncated it would
	// see invalid JSON (400), not a ping (200).
	pad := func(n int) string {
		const head, tail = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`, `"}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	if len(pad(limit)) != limit {
		t.Fatalf("pad is %d bytes", len(pad(limit)))
	}
	for _, tc := range []struct {
		name    string
		body    string
		chunked bool
		status  int
	}{
		{"a body at the limit is served", pad(limit), false, 200},
		{"a chunked body at the limit is served", pad(limit), true, 200},
		{"a body over the limit with Content-Length is 413", pad(limit + 1), false, 413},
		{"a chunked body over the limit is 413, never truncated", pad(limit + 1), true, 413},
		{"a chunked body far over the limit is 413", pad(64 * limit), true, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // unknown length: sent chunked
			}
			req, _ := http.NewRequestWithContext(stContext(t), http.MethodPost, e.url, body)
			req.Header = stHeaders(sid)
			if tc.chunked && req.ContentLength != 0 {
				t.Fatal("the request would not be chunked")
			}
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.status == 200 {
				if m := stMessage(t, b); string(m.ID) != "1" || m.Result == nil {
					t.Errorf("answer = %s", b)
				}
			}
		})
	}
}

func TestStreamableInitialize(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	for _, tc := range []struct{ name, asked, answered string }{
		{"a supported revision is answered as asked", mcp.Version20251125, mcp.Version20251125},
		{"an older supported revision is answered as asked", mcp.Version20250326, mcp.Version20250326},
		{"an unknown revision is answered with the newest", "2099-01-01", mcp.LatestVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.h.Sessions()
			r := e.post("", stInitBody(tc.asked))
			if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("initialize = %d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			sid := r.header.Get(HeaderSessionID)
			if len(sid) < 32 || strings.Trim(sid, "0123456789abcdef") != "" {
				t.Errorf("Mcp-Session-Id = %q, want an unguessable visible-ASCII id", sid)
			}
			if v, _ := jsonrpc.LookupString(stMessage(t, r.body).Result, "protocolVersion"); v != tc.answered {
				t.Errorf("protocolVersion = %q, want %q", v, tc.answered)
			}
			if e.h.Sessions() != before+1 {
				t.Errorf("Sessions = %d, want %d", e.h.Sessions(), before+1)
			}
		})
	}
	t.Run("each initialize opens a session of its own", func(t *testing.T) {
		a, b := e.initialize("", mcp.Version20251125), e.initialize("", mcp.Version20251125)
		if a == b {
			t.Fatalf("two sessions share the id %s", a)
		}
	})
	t.Run("a refused initialize opens no session", func(t *testing.T) {
		before := e.h.Sessions()
		r := e.post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
		if r.header.Get(HeaderSessionID) != "" {
			t.Errorf("a refused initialize issued session %s", r.header.Get(HeaderSessionID))
		}
		if code := stErrorCode(t, stMessage(t, r.body)); code != jsonrpc.CodeInvalidParams {
			t.Errorf("code = %d, want -32602: %s", code, r.body)
		}
		if e.h.Sessions() != before || s.Sessions() != before {
			t.Errorf("Sessions = %d (server %d), want %d", e.h.Sessions(), s.Sessions(), before)
		}
	})
}

func TestStreamableSessionBoundToIdentity(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sidA := e.initialize("alice", mcp.Version20251125)
	const unknown = "ffffffffffffffffffffffffffffffff"
	for _, tc := range []struct {
		name   string
		method string
		header func(sid, who string) http.Header
		body   string
	}{
		{"POST", http.MethodPost, func(sid, who string) http.Header { return stHeaders(sid, "X-Test-Identity", who) }, stPing},
		{"GET", http.MethodGet, func(sid, who string) http.Header {
			return stHeaders(sid, "X-Test-Identity", who, "Accept", "text/event-stream")
		}, ""},
		{"DELETE", http.MethodDelete, func(sid, who string) http.Header { return stHeaders(sid, "X-Test-Identity", who) }, ""},
	} {
		for _, who := range []string{"bob", ""} {
			t.Run(tc.name+" by another identity ("+who+") is 404 like an unknown id", func(t *testing.T) {
				stolen := e.do(tc.method, tc.header(sidA, who), tc.body)
				missing := e.do(tc.method, tc.header(unknown, who), tc.body)
				if stolen.status != http.StatusNotFound {
					t.Fatalf("status = %d, want 404: %s", stolen.status, stolen.body)
				}
				if stolen.status != missing.status || !bytes.Equal(stolen.body, missing.body) ||
					stolen.header.Get("Content-Type") != missing.header.Get("Content-Type") {
					t.Errorf("another's session answered %d %q, an unknown one %d %q", stolen.status, stolen.body, missing.status, missing.body)
				}
			})
		}
	}
	t.Run("the owner still has the session", func(t *testing.T) {
		if r := e.post(sidA, stPing, "X-Test-Identity", "alice"); r.status != 200 {
			t.Fatalf("owner's ping = %d: %s", r.status, r.body)
		}
	})
}

func TestStreamableDeleteEndsSession(t *testing.T) {
	stLeakCheck(t)
	s, probe := stNewServer(t)
	e := newStEnv(t, s, Options{})
	ctx := stContext(t)
	sid := e.initialize("", mcp.Version20251125)
	stream, _ := e.openGet(sid)

	call := make(chan stReply, 1)
	go func() { call <- e.post(sid, stCallBody(5, "block", `{}`)) }()
	stReceive(t, ctx, probe.started, "the blocking call to start")

	if r := e.do(http.MethodDelete, stHeaders(sid), ""); r.status != http.StatusOK {
		t.Fatalf("DELETE = %d: %s", r.status, r.body)
	}
	if got := stReceive(t, ctx, probe.cancelled, "the in-flight call to be cancelled"); got != "block" {
		t.Fatalf("cancelled %q", got)
	}
	stReceive(t, ctx, call, "the cancelled call's POST to end")
	if _, err := io.Copy(io.Discard, stream.Body); err != nil {
		t.Errorf("the GET stream ended with %v, want a clean end", err)
	}
	for _, tc := range []struct {
		name   string
		method string
		header http.Header
		body   string
	}{
		{"POST to an ended session is 404", http.MethodPost, stHeaders(sid), stPing},
		{"GET of an ended session is 404", http.MethodGet, stHeaders(sid, "Accept", "text/event-stream"), ""},
		{"DELETE of an ended session is 404", http.MethodDelete, stHeaders(sid), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := e.do(tc.method, tc.header, tc.body); r.status != http.StatusNotFound {
				t.Errorf("status = %d, want 404: %s", r.status, r.body)
			}
		})
	}
	if e.h.Sessions() != 0 || s.Sessions() != 0 {
		t.Errorf("Sessions = %d (server %d) after DELETE", e.h.Sessions(), s.Sessions())
	}
}

func TestStreamableBatch(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	old := e.initialize("", mcp.Version20250326)
	current := e.initialize("", mcp.Version20251125)
	for _, tc := range []struct {
		name   string
		sid    string
		body   string
		status int
		code   int64    // of the single error answer
		ids    []string // of the array answer
	}{
		{name: "a batch under 2025-11-25 is 400 with -32600", sid: current, body: `[` + stPing + `]`, status: 400, code: -32600},
		{name: "a batch under 2025-03-26 is answered as an array", sid: old,
			body:   `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` + stCallBody(2, "echo", `{"text":"b"}`) + `]`,
			status: 200, ids: []string{"1", "2"}},
		{name: "a bad element gets its own error in the array", sid: old,
			body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":3,"method":"ping"}]`, status: 200, ids: []string{"1", "3"}},
		{name: "an empty batch is -32600", sid: old, body: `[]`, status: 400, code: -32600},
		{name: "initialize inside a batch is refused", sid: old, body: `[` + stInitBody(mcp.Version20250326) + `]`, status: 400, code: -32600},
		{name: "a batch of notifications only is 202", sid: old, body: `[` + stInitialized + `]`, status: 202},
		{name: "a malformed batch is -32700", sid: old, body: `[{"jsonrpc":"2.0",`, status: 400, code: -32700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(tc.sid, tc.body)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.code != 0 {
				if got := stErrorCode(t, stMessage(t, r.body)); got != tc.code {
					t.Errorf("code = %d, want %d: %s", got, tc.code, r.body)
				}
			}
			if tc.ids != nil {
				var answers []json.RawMessage
				if err := json.Unmarshal(r.body, &answers); err != nil {
					t.Fatalf("not an array: %s", r.body)
				}
				var ids []string
				for _, a := range answers {
					ids = append(ids, string(stMessage(t, a).ID))
				}
				if strings.Join(ids, ",") != strings.Join(tc.ids, ",") {
					t.Errorf("answer ids = %v, want %v: %s", ids, tc.ids, r.body)
				}
			}
		})
	}
}

func TestStreamableAnswerMediaType(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	const (
		jsonFirst = "application/json, text/event-stream"
		sseFirst  = "text/event-stream, application/json"
	)
	progressCall := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"tok"}}}`
	for _, tc := range []struct {
		name     string
		accept   string
		body     string
		stream   bool
		progress int // progress events before the answer
		text     string
	}{
		{"Accept ranking text/event-stream first is answered as a stream", sseFirst, stCallBody(9, "echo", `{"text":"a"}`), true, 0, "echo: a"},
		{"Accept ranking application/json first is answered as JSON", jsonFirst, stCallBody(9, "echo", `{"text":"a"}`), false, 0, "echo: a"},
		{"q-values outrank the order", "application/json;q=0.5, text/event-stream", stCallBody(9, "echo", `{"text":"a"}`), true, 0, "echo: a"},
		{"JSON first turns into a stream when progress comes first", jsonFirst, progressCall, true, 3, "progressed"},
		{"a stream carries progress before the answer", sseFirst, progressCall, true, 3, "progressed"},
		{"without a progress token, JSON stays JSON", jsonFirst, stCallBody(9, "progress", `{}`), false, 0, "progressed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(sid, tc.body, "Accept", tc.accept)
			if r.status != 200 {
				t.Fatalf("status = %d: %s", r.status, r.body)
			}
			if r.header.Get(HeaderSessionID) != sid {
				t.Errorf("Mcp-Session-Id = %q, want %q", r.header.Get(HeaderSessionID), sid)
			}
			ct := r.header.Get("Content-Type")
			if !tc.stream {
				if ct != "application/json" {
					t.Fatalf("Content-Type = %q, want application/json", ct)
				}
				if got := stText(t, stMessage(t, r.body)); got != tc.text {
					t.Errorf("text = %q", got)
				}
				return
			}
			if ct != "text/event-stream" {
				t.Fatalf("Content-Type = %q, want text/event-stream", ct)
			}
			evs := stEvents(t, r.body)
			if len(evs) != tc.progress+1 {
				t.Fatalf("%d events, want %d progress and the answer: %q", len(evs), tc.progress, r.body)
			}
			seen := map[string]bool{}
			for i, ev := range evs {
				if ev.ID == "" || seen[ev.ID] {
					t.Errorf("event %d has id %q (ids must be present and distinct)", i, ev.ID)
				}
				seen[ev.ID] = true
				m := stMessage(t, ev.Data)
				if i < tc.progress {
					tok, _ := jsonrpc.Lookup(m.Params, "progressToken")
					if m.Method != "notifications/progress" || string(tok) != `"tok"` {
						t.Errorf("event %d = %s, want progress for tok", i, ev.Data)
					}
					continue
				}
				if string(m.ID) != "9" || stText(t, m) != tc.text {
					t.Errorf("last event = %s, want the answer", ev.Data)
				}
			}
		})
	}
}

func TestStreamableStateless(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{Stateless: true})
	t.Run("initialize works without a session and issues none", func(t *testing.T) {
		r := e.post("", stInitBody(mcp.Version20251125))
		if r.status != 200 || r.header.Get(HeaderSessionID) != "" {
			t.Fatalf("initialize = %d, session %q: %s", r.status, r.header.Get(HeaderSessionID), r.body)
		}
		if v, _ := jsonrpc.LookupString(stMessage(t, r.body).Result, "protocolVersion"); v != mcp.Version20251125 {
			t.Errorf("protocolVersion = %q", v)
		}
	})
	t.Run("tools/call works with no session", func(t *testing.T) {
		r := e.post("", stCallBody(3, "echo", `{"text":"x"}`), HeaderProtocolVersion, mcp.Version20251125)
		if r.status != 200 || r.header.Get(HeaderSessionID) != "" {
			t.Fatalf("tools/call = %d, session %q: %s", r.status, r.header.Get(HeaderSessionID), r.body)
		}
		if got := stText(t, stMessage(t, r.body)); got != "echo: x" {
			t.Errorf("text = %q", got)
		}
	})
	t.Run("a notification is 202", func(t *testing.T) {
		if r := e.post("", stInitialized); r.status != 202 || len(r.body) != 0 {
			t.Errorf("notification = %d %q", r.status, r.body)
		}
	})
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		t.Run(m+" is 405 with Allow POST", func(t *testing.T) {
			r := e.do(m, stHeaders("", "Accept", "text/event-stream, application/json"), "")
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
				t.Errorf("%s = %d, Allow %q", m, r.status, r.header.Get("Allow"))
			}
		})
	}
	if e.h.Sessions() != 0 || s.Sessions() != 0 {
		t.Errorf("stateless mode keeps %d sessions (server %d)", e.h.Sessions(), s.Sessions())
	}
}

func TestStreamableGetStream(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	if r := e.post(sid, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://watched"}}`); r.status != 200 {
		t.Fatalf("subscribe = %d: %s", r.status, r.body)
	}
	first, events := e.openGet(sid)
	if first.Header.Get(HeaderSessionID) != sid {
		t.Errorf("GET's Mcp-Session-Id = %q", first.Header.Get(HeaderSessionID))
	}

	t.Run("a second concurrent GET is 409", func(t *testing.T) {
		r := e.do(http.MethodGet, stHeaders(sid, "Accept", "text/event-stream"), "")
		if r.status != http.StatusConflict {
			t.Fatalf("second GET = %d, want 409: %s", r.status, r.body)
		}
	})
	t.Run("a resource update after subscribe arrives with an id", func(t *testing.T) {
		s.ResourceUpdated("mem://other") // not subscribed: not sent
		s.ResourceUpdated("mem://watched")
		ev, m := stNextMessage(t, events)
		uri, _ := jsonrpc.LookupString(m.Params, "uri")
		if m.Method != "notifications/resources/updated" || uri != "mem://watched" {
			t.Fatalf("event = %s", ev.Data)
		}
		if ev.ID == "" {
			t.Error("the event has no id, so it cannot be resumed from")
		}
	})
	t.Run("a GET after the first one ends is accepted", func(t *testing.T) {
		_ = first.Body.Close()
		var status int
		stWaitFor(t, "the server to let go of the first stream", func() bool {
			resp := e.open(http.MethodGet, stHeaders(sid, "Accept", "text/event-stream"), "")
			status = resp.StatusCode
			_ = resp.Body.Close()
			return status != http.StatusConflict
		})
		if status != http.StatusOK {
			t.Errorf("GET = %d", status)
		}
	})
}

func TestStreamableResumption(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	if r := e.post(sid, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://watched"}}`); r.status != 200 {
		t.Fatalf("subscribe = %d: %s", r.status, r.body)
	}
	stream, events := e.openGet(sid)
	s.ResourceUpdated("mem://watched")
	seen, _ := stNextMessage(t, events)

	// The stream breaks; what is sent meanwhile is kept for the client.
	_ = stream.Body.Close()
	s.ResourceUpdated("mem://watched")
	s.ResourceUpdated("mem://watched")

	var resumed *sse.Reader
	stWaitFor(t, "the server to let go of the broken stream", func() bool {
		resp := e.open(http.MethodGet, stHeaders(sid, "Accept", "text/event-stream", "Last-Event-ID", seen.ID), "")
		if resp.StatusCode == http.StatusConflict {
			_ = resp.Body.Close()
			return false
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("resuming GET = %d", resp.StatusCode)
		}
		resumed = sse.NewReader(resp.Body, 0)
		return true
	})
	var ids []string
	for range 2 {
		ev, m := stNextMessage(t, resumed)
		if m.Method != "notifications/resources/updated" {
			t.Errorf("replayed %s", ev.Data)
		}
		ids = append(ids, ev.ID)
	}
	if ids[0] == seen.ID || ids[0] == ids[1] || ids[0] == "" || ids[1] == "" {
		t.Errorf("replayed ids %v after %q: want the two events after it, in order", ids, seen.ID)
	}
	// Live events follow the replay on the same stream.
	s.ResourceUpdated("mem://watched")
	if ev, _ := stNextMessage(t, resumed); ev.ID == ids[1] || ev.ID == "" {
		t.Errorf("live event id %q after replayed %v", ev.ID, ids)
	}
}

func TestStreamableResumptionFromAnUnknownIDReplaysNothing(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	e.post(sid, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://watched"}}`)
	s.ResourceUpdated("mem://watched") // kept in the log, sent nowhere
	_, events := e.openGet(sid, "Last-Event-ID", "no-such-event")
	s.ResourceUpdated("mem://watched")
	ev, _ := stNextMessage(t, events)
	if ev.ID != "0-2" {
		t.Errorf("first event on the stream is %q, want only the live one (0-2)", ev.ID)
	}
}

// stStaller stands in for a client that stops reading its GET stream:
// once the stream is open, writes to it block until release.
type stStaller struct {
	entered chan struct{} // a write is stalled
	release chan struct{}
	once    sync.Once
}

func (s *stStaller) unstall() { s.once.Do(func() { close(s.release) }) }

func (s *stStaller) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("X-Test-Stall") != "" {
			w = &stStalledWriter{ResponseWriter: w, s: s}
		}
		next.ServeHTTP(w, r)
	})
}

type stStalledWriter struct {
	http.ResponseWriter
	s *stStaller
}

func (w *stStalledWriter) Write(p []byte) (int, error) {
	select {
	case w.s.entered <- struct{}{}:
	default:
	}
	<-w.s.release
	return w.ResponseWriter.Write(p)
}

func (w *stStalledWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestStreamableStalledStreamBlocksNoPost(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	stall := &stStaller{entered: make(chan struct{}, 1), release: make(chan struct{})}
	e := newStEnv(t, s, Options{}, stall.wrap)
	t.Cleanup(stall.unstall) // runs before the handler closes
	ctx := stContext(t)
	sid := e.initialize("", mcp.Version20251125)
	e.post(sid, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://watched"}}`)
	e.openGet(sid, "X-Test-Stall", "1")
	notified := make(chan struct{})
	go func() {
		defer close(notified)
		s.ResourceUpdated("mem://watched")
	}()
	stReceive(t, ctx, stall.entered, "the stream's write to stall")

	for _, accept := range []string{"application/json, text/event-stream", "text/event-stream, application/json"} {
		r := e.post(sid, stCallBody(2, "echo", `{"text":"still here"}`), "Accept", accept)
		if r.status != 200 || !bytes.Contains(r.body, []byte("echo: still here")) {
			t.Errorf("POST (%s) while the GET stream is stalled = %d %s", accept, r.status, r.body)
		}
	}
	stall.unstall()
	stReceive(t, ctx, notified, "the notification to be written once the client reads again")
}

func TestStreamableConcurrentCallsOnOneSession(t *testing.T) {
	stLeakCheck(t)
	const n = 32
	s, _ := stNewServer(t)
	var arrived atomic.Int32
	all := make(chan struct{})
	// barrier answers only once all n calls are inside it: served one at a
	// time, the first would wait forever.
	err := s.AddTools(&mcp.Tool{Name: "barrier", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("through")}})
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	var wg sync.WaitGroup
	replies := make([]stReply, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = e.post(sid, stCallBody(100+i, "barrier", `{}`))
		}()
	}
	wg.Wait()
	for i, r := range replies {
		m := stMessage(t, r.body)
		if r.status != 200 || string(m.ID) != fmt.Sprint(100+i) || stText(t, m) != "through" {
			t.Errorf("call %d = %d %s", i, r.status, r.body)
		}
	}
}

func TestStreamableSlowCallDoesNotBlockAFastOne(t *testing.T) {
	stLeakCheck(t)
	s, probe := stNewServer(t)
	e := newStEnv(t, s, Options{})
	ctx := stContext(t)
	sid := e.initialize("", mcp.Version20251125)
	slow := make(chan stReply, 1)
	go func() { slow <- e.post(sid, stCallBody(1, "slow", `{}`)) }()
	stReceive(t, ctx, probe.started, "the slow call to start")

	fast := e.post(sid, stCallBody(2, "echo", `{"text":"fast"}`))
	if got := stText(t, stMessage(t, fast.body)); got != "echo: fast" {
		t.Fatalf("fast call = %s", fast.body)
	}
	select {
	case r := <-slow:
		t.Fatalf("the slow call finished before it was released: %s", r.body)
	default:
	}
	close(probe.release)
	if got := stText(t, stMessage(t, stReceive(t, ctx, slow, "the slow call").body)); got != "slow done" {
		t.Errorf("slow call = %q", got)
	}
}

func TestStreamableSamplingAnswerWhileTheCallIsOpen(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	resp := e.open(http.MethodPost, stHeaders(sid), stCallBody(4, "sample", `{}`))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("tools/call = %d %s, want a stream carrying the server's request", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := sse.NewReader(resp.Body, 0)
	_, req := stNextMessage(t, events)
	if req.Method != "sampling/createMessage" || !req.IsRequest() {
		t.Fatalf("first event = %s %s, want a sampling request", req.Method, req.Params)
	}
	answer := `{"jsonrpc":"2.0","id":` + string(req.ID) +
		`,"result":{"model":"m","role":"assistant","content":{"type":"text","text":"from the client"}}}`
	if r := e.post(sid, answer); r.status != http.StatusAccepted || len(r.body) != 0 {
		t.Fatalf("the client's answer = %d %q, want 202 while the call is open", r.status, r.body)
	}
	_, res := stNextMessage(t, events)
	if string(res.ID) != "4" || stText(t, res) != "sampled: from the client" {
		t.Fatalf("answer = %s %s", res.ID, res.Result)
	}
}

func TestStreamableIdleReaper(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{IdleTimeout: 50 * time.Millisecond})
	idle := e.initialize("", mcp.Version20251125)
	streaming := e.initialize("", mcp.Version20251125)
	e.openGet(streaming) // an open stream keeps its session busy

	stWaitFor(t, "the idle session to be reaped", func() bool { return e.h.Sessions() == 1 })
	if r := e.post(idle, stPing); r.status != http.StatusNotFound {
		t.Errorf("reaped session answered %d, want 404", r.status)
	}
	if r := e.post(streaming, stPing); r.status != http.StatusOK {
		t.Errorf("session with an open stream answered %d, want 200: it was reaped although busy", r.status)
	}
	if s.Sessions() != 1 {
		t.Errorf("server sessions = %d: a reaped session was not closed", s.Sessions())
	}
}

func TestStreamableMaxSessions(t *testing.T) {
	stLeakCheck(t)
	t.Run("beyond the cap with no idle session is 503", func(t *testing.T) {
		s, _ := stNewServer(t)
		e := newStEnv(t, s, Options{MaxSessions: 1})
		busy := e.initialize("", mcp.Version20251125)
		e.openGet(busy)
		r := e.post("", stInitBody(mcp.Version20251125))
		if r.status != http.StatusServiceUnavailable || r.header.Get(HeaderSessionID) != "" {
			t.Fatalf("initialize beyond the cap = %d, session %q", r.status, r.header.Get(HeaderSessionID))
		}
		if e.h.Sessions() != 1 {
			t.Errorf("Sessions = %d", e.h.Sessions())
		}
	})
	t.Run("beyond the cap the least recently used idle session makes room, and only it", func(t *testing.T) {
		s, _ := stNewServer(t)
		e := newStEnv(t, s, Options{MaxSessions: 2})
		older := e.initialize("", mcp.Version20251125)
		newer := e.initialize("", mcp.Version20251125)
		e.post(newer, stPing) // newer is the more recently used
		third := e.initialize("", mcp.Version20251125)
		if r := e.post(older, stPing); r.status != http.StatusNotFound {
			t.Errorf("least recently used session answered %d, want 404 (evicted)", r.status)
		}
		for _, sid := range []string{newer, third} {
			if r := e.post(sid, stPing); r.status != http.StatusOK {
				t.Errorf("session %s answered %d, want 200: more was evicted than needed", sid, r.status)
			}
		}
	})
}

func TestStreamableCloseEndsEverything(t *testing.T) {
	stLeakCheck(t)
	s, probe := stNewServer(t)
	e := newStEnv(t, s, Options{})
	ctx := stContext(t)
	sid := e.initialize("", mcp.Version20251125)
	e.initialize("", mcp.Version20250618)
	stream, _ := e.openGet(sid)
	call := make(chan stReply, 1)
	go func() { call <- e.post(sid, stCallBody(5, "block", `{}`)) }()
	stReceive(t, ctx, probe.started, "the blocking call to start")

	e.h.Close()
	stReceive(t, ctx, probe.cancelled, "the in-flight call to be cancelled")
	stReceive(t, ctx, call, "the cancelled call's POST to end")
	if _, err := io.Copy(io.Discard, stream.Body); err != nil {
		t.Errorf("GET stream ended with %v", err)
	}
	if e.h.Sessions() != 0 || s.Sessions() != 0 {
		t.Errorf("after Close: Sessions = %d, server sessions = %d", e.h.Sessions(), s.Sessions())
	}
	if r := e.post(sid, stPing); r.status != http.StatusNotFound {
		t.Errorf("a closed session answered %d", r.status)
	}
	e.h.Close() // twice is fine
}

func TestStreamableResultBytesAreKept(t *testing.T) {
	stLeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	sid := e.initialize("", mcp.Version20251125)
	if !json.Valid([]byte(stRawResult)) {
		t.Fatal("stRawResult is not JSON")
	}
	t.Run("JSON answer", func(t *testing.T) {
		r := e.post(sid, stCallBody(6, "raw", `{}`))
		if r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("Content-Type = %q", r.header.Get("Content-Type"))
		}
		if got := stMessage(t, r.body).Result; string(got) != stRawResult {
			t.Errorf("result bytes changed:\n got %s\nwant %s", got, stRawResult)
		}
	})
	t.Run("event-stream answer", func(t *testing.T) {
		r := e.post(sid, stCallBody(6, "raw", `{}`), "Accept", "text/event-stream, application/json")
		evs := stEvents(t, r.body)
		if len(evs) != 1 {
			t.Fatalf("%d events: %q", len(evs), r.body)
		}
		if got := stMessage(t, evs[0].Data).Result; string(got) != stRawResult {
			t.Errorf("result bytes changed:\n got %s\nwant %s", got, stRawResult)
		}
	})
}

// TestTranscriptToolsCall is seed 004's deliverable over a real socket:
// one tools/call with invalid arguments gets JSON-RPC -32602, one valid
// call gets result.content. The exchange is logged as a transcript.
func TestTranscriptToolsCall(t *testing.T) {
	stLeakCheck(t)
	e := newStEnv(t, fixture.New(fixture.Options{}), Options{})
	var sid string
	exchange := func(body string) *jsonrpc.Message {
		t.Helper()
		hdr := stHeaders(sid)
		if sid != "" {
			hdr.Set(HeaderProtocolVersion, mcp.Version20251125)
		}
		r := e.do(http.MethodPost, hdr, body)
		t.Logf("--> POST /mcp %s", body)
		t.Logf("<-- %d %s %s", r.status, r.header.Get("Content-Type"), bytes.TrimSpace(r.body))
		if sid == "" {
			sid = r.header.Get(HeaderSessionID)
		}
		if len(r.body) == 0 {
			return nil
		}
		return stMessage(t, r.body)
	}
	exchange(stInitBody(mcp.Version20251125))
	exchange(stInitialized)

	bad := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{}}}`)
	if code := stErrorCode(t, bad); code != jsonrpc.CodeInvalidParams || string(bad.ID) != "2" {
		t.Fatalf("invalid arguments: code %d id %s, want -32602 for id 2", code, bad.ID)
	}
	data, _ := jsonrpc.Lookup(bad.Error, "data")
	if !bytes.Contains(data, []byte("prompt")) {
		t.Errorf("error data %s does not name the missing argument", data)
	}
	good := exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_simple_text"}}`)
	if good.Error != nil || string(good.ID) != "3" {
		t.Fatalf("valid call answered %s", good.Error)
	}
	if got := stText(t, good); got != "This is a simple text response for testing." {
		t.Errorf("result.content[0].text = %q", got)
	}
}

// stSDKSession connects the official Go SDK's Streamable HTTP client to e.
func stSDKSession(t *testing.T, ctx context.Context, e *stEnv, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk", Version: "1.8.0"}, opts)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.url, HTTPClient: e.client}, nil)
	if err != nil {
		t.Fatalf("SDK connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestStreamableSDKClient(t *testing.T) {
	stLeakCheck(t)
	e := newStEnv(t, fixture.New(fixture.Options{}), Options{})
	ctx := stContext(t)
	progress := make(chan *sdk.ProgressNotificationParams, 8)
	cs := stSDKSession(t, ctx, e, &sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Model: "test-model", Role: "assistant", StopReason: "endTurn",
				Content: &sdk.TextContent{Text: "This is a test response from the client"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { progress <- r.Params },
	})
	if v := cs.InitializeResult().ProtocolVersion; v != mcp.Version20251125 {
		t.Errorf("negotiated %q", v)
	}
	firstText := func(t *testing.T, res *sdk.CallToolResult) string {
		t.Helper()
		if len(res.Content) == 0 {
			t.Fatalf("no content: %+v", res)
		}
		tc, ok := res.Content[0].(*sdk.TextContent)
		if !ok {
			t.Fatalf("content[0] is %T", res.Content[0])
		}
		return tc.Text
	}

	t.Run("lists tools", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tool := range res.Tools {
			names[tool.Name] = true
		}
		for _, want := range []string{"test_simple_text", "test_tool_with_progress", "test_sampling", "json_schema_2020_12_tool"} {
			if !names[want] {
				t.Errorf("tools/list lacks %s", want)
			}
		}
	})
	t.Run("calls test_simple_text", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_simple_text"})
		if err != nil {
			t.Fatal(err)
		}
		if got := firstText(t, res); got != "This is a simple text response for testing." || res.IsError {
			t.Errorf("text %q isError %v", got, res.IsError)
		}
	})
	t.Run("invalid arguments are -32602", func(t *testing.T) {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_sampling", Arguments: map[string]any{}})
		var werr *sdkjsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("err = %v, want JSON-RPC -32602", err)
		}
	})
	t.Run("progress arrives with the call", func(t *testing.T) {
		params := &sdk.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}}
		params.SetProgressToken("sdk-progress")
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if got := firstText(t, res); got != `"sdk-progress"` {
			t.Errorf("text = %q", got)
		}
		last := -1.0
		for i := range 3 {
			p := stReceive(t, ctx, progress, "progress notification")
			if p.ProgressToken != "sdk-progress" || p.Progress < last || p.Total != 100 {
				t.Errorf("progress %d = %+v", i, p)
			}
			last = p.Progress
		}
	})
	t.Run("sampling goes back to the client", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "Test prompt for sampling"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := firstText(t, res); got != "LLM response: This is a test response from the client" {
			t.Errorf("text = %q", got)
		}
	})
	t.Run("reads a resource and a template", func(t *testing.T) {
		for uri, want := range map[string]string{
			"test://static-text":       "This is the content of the static text resource.",
			"test://template/123/data": `"id":"123"`,
		} {
			res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatalf("%s: %v", uri, err)
			}
			if len(res.Contents) != 1 || res.Contents[0].URI != uri || !strings.Contains(res.Contents[0].Text, want) {
				t.Errorf("%s: contents = %+v", uri, res.Contents)
			}
		}
		tmpl, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "test://template/{id}/data" {
			t.Errorf("templates = %+v, %v", tmpl, err)
		}
	})
	t.Run("gets prompts", func(t *testing.T) {
		list, err := cs.ListPrompts(ctx, nil)
		if err != nil || len(list.Prompts) != 4 {
			t.Fatalf("prompts = %+v, %v", list, err)
		}
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "test_prompt_with_arguments",
			Arguments: map[string]string{"arg1": "testValue1", "arg2": "testValue2"}})
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := res.Messages[0].Content.(*sdk.TextContent); !ok ||
			tc.Text != "Prompt with arguments: arg1='testValue1', arg2='testValue2'" {
			t.Errorf("messages = %+v", res.Messages)
		}
	})
	t.Run("closing the client ends its session", func(t *testing.T) {
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		stWaitFor(t, "the session to end", func() bool { return e.h.Sessions() == 0 })
	})
}
