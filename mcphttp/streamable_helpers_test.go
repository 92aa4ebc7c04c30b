// streamable_helpers_test.go holds what the Streamable HTTP server
// transport's tests share: a small catalogue server (stNewServer), a
// Handler on a loopback socket behind Guard and a stand-in for
// authentication (stEnv), the headers and bodies a well-behaved client
// sends, and readers for JSON-RPC answers and event streams.
//
// Every identifier in the streamable_*_test.go files starts with "st" (or
// is a TestStreamable… test) so that it cannot collide with the other
// transports' tests in this package.

package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
)

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

// stEvents reads every event of an event-stream body that carries a
// message, as a client does: a priming event (an id and empty data) is
// none (TestStreamablePOSTStreamsOpenWithAPrimingEvent pins it).
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
		if len(ev.Data) > 0 {
			out = append(out, ev)
		}
	}
}

// stNextMessage reads the next message of a stream, past priming events.
func stNextMessage(t *testing.T, r *sse.Reader) (sse.Event, *jsonrpc.Message) {
	t.Helper()
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if len(ev.Data) > 0 {
			return ev, stMessage(t, ev.Data)
		}
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
