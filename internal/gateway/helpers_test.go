// helpers_test.go holds what the gateway's end-to-end access-control tests
// share: a small catalogue whose entries carry minimum roles (gwCatalogue),
// a real gateway built from YAML on a real SQLite store and served on a
// loopback socket (gwStart), raw HTTP requests for where the status code is
// the contract, and our own MCP client for where the JSON-RPC answer is.
//
// Every identifier here starts with "gw" so that it cannot collide with the
// other tests of this package.

package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// gwProbe counts handler runs by entry name, so that a test can tell that a
// refused call never reached its handler.
type gwProbe struct {
	mu   sync.Mutex
	runs map[string]int
}

func (p *gwProbe) ran(name string) {
	p.mu.Lock()
	p.runs[name]++
	p.mu.Unlock()
}

func (p *gwProbe) count(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs[name]
}

// The catalogue's entries, by the role they need.
const (
	gwToolEcho       = "view_echo"        // viewer floor (MinRole ""), takes {"text": string}
	gwToolFail       = "fail_tool"        // viewer; answers an isError result
	gwToolEdit       = "edit_note"        // editor
	gwToolAdmin      = "admin_reset"      // admin
	gwToolExpensive  = "expensive_report" // viewer; the target of entry rate rules
	gwToolExpensive2 = "expensive_export" // viewer; matches the same glob
	gwResPublic      = "mem://public"     // viewer
	gwResVault       = "mem://vault"      // admin
	gwTemplNotes     = "mem://notes/{id}" // editor
	gwPromptGreet    = "greet"            // viewer
	gwPromptAdmin    = "admin_brief"      // admin
)

// gwCatalogue registers a small catalogue whose every entry counts its runs
// in p.
func gwCatalogue(p *gwProbe) func(*mcp.Server) {
	text := func(name, s string) (json.RawMessage, error) {
		p.ran(name)
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(s)}})
	}
	tool := func(name, minRole string) *mcp.Tool {
		return &mcp.Tool{Name: name, MinRole: minRole,
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				return text(name, name+" done")
			}}
	}
	resource := func(uri, minRole string) *mcp.Resource {
		return &mcp.Resource{URI: uri, Name: uri, MinRole: minRole,
			Read: func(_ context.Context, _ *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
				p.ran(uri)
				return mcp.Result(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "contents of "+uri)}})
			}}
	}
	prompt := func(name, minRole string) *mcp.Prompt {
		return &mcp.Prompt{Name: name, MinRole: minRole,
			Get: func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
				p.ran(name)
				return mcp.Result(mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("hello from " + name)}}})
			}}
	}
	return func(s *mcp.Server) {
		must := func(err error) {
			if err != nil {
				panic(err)
			}
		}
		must(s.AddTools(
			&mcp.Tool{Name: gwToolEcho,
				InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
				Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
					// The argument is not echoed: the tests look for it
					// where it must not be, and a response is one place.
					return text(gwToolEcho, "echoed")
				}},
			&mcp.Tool{Name: gwToolFail, MinRole: "viewer",
				Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
					p.ran(gwToolFail)
					return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("it failed")}, IsError: true})
				}},
			tool(gwToolEdit, "editor"),
			tool(gwToolAdmin, "admin"),
			tool(gwToolExpensive, "viewer"),
			tool(gwToolExpensive2, "viewer"),
		))
		must(s.AddResources(resource(gwResPublic, "viewer"), resource(gwResVault, "admin")))
		must(s.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: gwTemplNotes, Name: "notes", MinRole: "editor",
			Read: func(_ context.Context, _ *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
				p.ran(gwTemplNotes)
				return mcp.Result(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "note")}})
			}}))
		must(s.AddPrompts(prompt(gwPromptGreet, "viewer"), prompt(gwPromptAdmin, "admin")))
	}
}

// gwRecorder is an http.RoundTripper that copies every response body the
// client reads into seen, so that a test can search all of them.
type gwRecorder struct {
	next http.RoundTripper
	seen *testkit.Output
}

func (r gwRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	for name, vals := range resp.Header {
		fmt.Fprintf(r.seen, "%s: %s\n", name, strings.Join(vals, ", "))
	}
	resp.Body = gwTeeBody{Reader: io.TeeReader(resp.Body, r.seen), Closer: resp.Body}
	return resp, nil
}

type gwTeeBody struct {
	io.Reader
	io.Closer
}

// gwEnv is one gateway, built as the command builds it, on a loopback
// test server.
type gwEnv struct {
	t      *testing.T
	cfg    *config.Config
	gw     *gateway.Gateway
	store  *sqlite.Store
	dbPath string
	srv    *httptest.Server
	base   string // http://127.0.0.1:port
	logs   *testkit.Output
	seen   *testkit.Output // every response the env's HTTP client read
	client *http.Client
	probe  *gwProbe

	gwOnce, storeOnce sync.Once
	gwErr             error
}

// gwStart builds a gateway from yamlText (the store path is filled in) on a
// fresh SQLite file, logging JSON at debug level into e.logs.
func gwStart(t *testing.T, yamlText string) *gwEnv {
	t.Helper()
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	e := &gwEnv{t: t, logs: &testkit.Output{}, seen: &testkit.Output{}, probe: &gwProbe{runs: map[string]int{}}}
	var err error
	if e.cfg, err = config.Parse([]byte(yamlText)); err != nil {
		t.Fatalf("config: %v", err)
	}
	e.dbPath = filepath.Join(t.TempDir(), "mcpgate.db")
	e.cfg.Store = e.dbPath
	if e.store, err = sqlite.Open(ctx, e.dbPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.closeStore() })
	e.gw, err = gateway.New(ctx, e.cfg, gateway.Options{
		Store:     e.store,
		Logger:    slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Info:      mcp.Implementation{Name: "gateway-test", Version: "0"},
		Catalogue: gwCatalogue(e.probe),
	})
	if err != nil {
		t.Fatalf("gateway.New: %v", err)
	}
	e.srv = httptest.NewServer(e.gw.Handler())
	e.base = e.srv.URL
	transport := &http.Transport{}
	e.client = &http.Client{Transport: gwRecorder{next: transport, seen: e.seen}}
	t.Cleanup(transport.CloseIdleConnections)
	t.Cleanup(e.srv.Close)
	t.Cleanup(func() { _ = e.closeGateway(context.Background()) })
	return e
}

// closeGateway ends every session and flushes the audit log, once.
func (e *gwEnv) closeGateway(ctx context.Context) error {
	e.gwOnce.Do(func() { e.gwErr = e.gw.Close(ctx) })
	return e.gwErr
}

// closeStore closes the gateway's store handle, once.
func (e *gwEnv) closeStore() {
	e.storeOnce.Do(func() {
		if err := e.store.Close(); err != nil {
			e.t.Errorf("store close: %v", err)
		}
	})
}

// token creates a service token through the gateway and returns its secret
// and id.
func (e *gwEnv) token(name, role string) (secret, id string) {
	e.t.Helper()
	secret, rec, err := e.gw.Tokens().Create(testkit.Context(e.t), name, role, time.Time{})
	if err != nil {
		e.t.Fatalf("token %s: %v", name, err)
	}
	return secret, rec.ID
}

// gwReply is a raw HTTP answer.
type gwReply struct {
	status int
	header http.Header
	body   []byte
}

// gwRequest is one raw HTTP request; auth is the whole Authorization
// header value ("" for none).
type gwRequest struct {
	method, path, auth, session, body string
}

// gwBearer is the Authorization value for a bearer credential.
func gwBearer(secret string) string { return "Bearer " + secret }

const gwInitializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// do sends r as a well-behaved Streamable HTTP client would, and reads the
// whole answer, but for a GET that opened an event stream: its body is
// left unread.
func (e *gwEnv) do(r gwRequest) gwReply {
	e.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(testkit.Context(e.t), r.method, e.base+r.path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	switch r.method {
	case http.MethodPost:
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	if r.auth != "" {
		req.Header.Set("Authorization", r.auth)
	}
	if r.session != "" {
		req.Header.Set(mcphttp.HeaderSessionID, r.session)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	rep := gwReply{status: resp.StatusCode, header: resp.Header}
	if r.method == http.MethodGet && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return rep // a stream was opened: it would not end, and its status says it all
	}
	if rep.body, err = io.ReadAll(resp.Body); err != nil {
		e.t.Fatalf("%s %s: reading body: %v", r.method, r.path, err)
	}
	return rep
}

// initialize opens a Streamable HTTP session over raw HTTP for the bearer
// secret and returns its id.
func (e *gwEnv) initialize(secret string) string {
	e.t.Helper()
	rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(secret), body: gwInitializeBody})
	id := rep.header.Get(mcphttp.HeaderSessionID)
	if rep.status != http.StatusOK || id == "" {
		e.t.Fatalf("initialize: %d %s (session %q)", rep.status, rep.body, id)
	}
	rep = e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(secret), session: id,
		body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
	if rep.status != http.StatusAccepted {
		e.t.Fatalf("notifications/initialized: %d %s", rep.status, rep.body)
	}
	return id
}

// gwToolCallBody is a raw tools/call request.
func gwToolCallBody(id int, name string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, name)
}

// The transports our client dials.
const (
	gwStreamable = "streamable"
	gwSSE        = "sse"
)

// dial connects our MCP client over transport with the Authorization
// value auth (none when "") and performs initialize.
func (e *gwEnv) dial(transport, auth string) *mcp.Client {
	e.t.Helper()
	c, err := e.dialErr(transport, auth)
	if err != nil {
		e.t.Fatalf("%s client: %v", transport, err)
	}
	return c
}

// dialConn opens a client connection; a legacy SSE one opens its stream
// at once, a Streamable HTTP one makes no request before the first write.
func (e *gwEnv) dialConn(transport, auth string) (mcp.Conn, error) {
	o := mcphttp.ClientOptions{HTTPClient: e.client, Header: http.Header{}}
	if auth != "" {
		o.Header.Set("Authorization", auth)
	}
	switch transport {
	case gwStreamable:
		return mcphttp.DialStreamable(testkit.Context(e.t), e.base+"/mcp", o)
	case gwSSE:
		return mcphttp.DialSSE(testkit.Context(e.t), e.base+"/sse", o)
	}
	e.t.Fatalf("unknown transport %q", transport)
	return nil, nil
}

// dialErr connects and initializes, returning what failed.
func (e *gwEnv) dialErr(transport, auth string) (*mcp.Client, error) {
	conn, err := e.dialConn(transport, auth)
	if err != nil {
		return nil, err
	}
	return e.connect(conn)
}

// connect starts our client on conn and performs initialize. The client
// is closed when the test ends.
func (e *gwEnv) connect(conn mcp.Conn) (*mcp.Client, error) {
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "gateway-test", Version: "0"}})
	e.t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(testkit.Context(e.t)); err != nil {
		return nil, err
	}
	return c, nil
}

// sseSession opens a legacy SSE session with the Authorization value auth
// and returns its client and the path (with ?sessionId=) it posts to.
func (e *gwEnv) sseSession(auth string) (*mcp.Client, string) {
	e.t.Helper()
	conn, err := e.dialConn(gwSSE, auth)
	if err != nil {
		e.t.Fatalf("sse: %v", err)
	}
	endpoint := conn.(*mcphttp.SSEConn).Endpoint()
	c, err := e.connect(conn)
	if err != nil {
		e.t.Fatalf("sse client: initialize: %v", err)
	}
	path, ok := strings.CutPrefix(endpoint, e.base)
	if !ok || !strings.HasPrefix(path, "/messages?sessionId=") {
		e.t.Fatalf("sse endpoint %q is not %s/messages?sessionId=…", endpoint, e.base)
	}
	return c, path
}

// gwCall sends one request; params is marshalled unless it is already raw.
func gwCall(ctx context.Context, c *mcp.Client, method string, params any) (json.RawMessage, error) {
	raw, ok := params.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, err
		}
	}
	return c.Call(ctx, method, raw)
}

// gwCallTool calls a tool with args (nil: {}).
func gwCallTool(ctx context.Context, c *mcp.Client, name string, args any) (json.RawMessage, error) {
	if args == nil {
		args = map[string]any{}
	}
	return gwCall(ctx, c, "tools/call", map[string]any{"name": name, "arguments": args})
}

// gwErrData is the data of the gate's refusals.
type gwErrData struct {
	Kind              string      `json:"kind"`
	Required          string      `json:"required"`
	Role              string      `json:"role"`
	RetryAfterSeconds json.Number `json:"retryAfterSeconds"`
}

// gwRPCError returns err as a JSON-RPC error with its data decoded, or nil
// when err is not one.
func gwRPCError(err error) (*jsonrpc.Error, gwErrData) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return nil, gwErrData{}
	}
	var d gwErrData
	if len(je.Data) > 0 {
		dec := json.NewDecoder(bytes.NewReader(je.Data))
		dec.UseNumber()
		_ = dec.Decode(&d)
	}
	return je, d
}

// gwWantRefusal fails unless err is the gate's refusal with code and kind.
func gwWantRefusal(t *testing.T, what string, err error, code int64, kind string) gwErrData {
	t.Helper()
	je, d := gwRPCError(err)
	if je == nil {
		t.Errorf("%s: got %v, want JSON-RPC %d (%s)", what, err, code, kind)
		return d
	}
	if je.Code != code || d.Kind != kind {
		t.Errorf("%s: got %d %q (data %s), want %d with data.kind %q", what, je.Code, je.Message, je.Data, code, kind)
	}
	return d
}

// gwIsToolError reports whether a tools/call result has isError set.
func gwIsToolError(res json.RawMessage) bool {
	v, _ := jsonrpc.Lookup(res, "isError")
	return string(v) == "true"
}

// gwNames lists the values of member in the array at key of a list result.
func gwNames(t *testing.T, res json.RawMessage, key, member string) []string {
	t.Helper()
	var page map[string]json.RawMessage
	var items []map[string]any
	if err := json.Unmarshal(res, &page); err != nil || json.Unmarshal(page[key], &items) != nil {
		t.Fatalf("list result %s: %v", res, err)
	}
	var out []string
	for _, item := range items {
		s, _ := item[member].(string)
		out = append(out, s)
	}
	return out
}

// gwTail reads every audit record from a store.
func gwTail(t *testing.T, st store.Store) []store.AuditRecord {
	t.Helper()
	recs, err := st.TailAudit(testkit.Context(t), 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// gwFileBytes reads the database file and its WAL and shared-memory files,
// those that exist.
func gwFileBytes(t *testing.T, dbPath string) []byte {
	t.Helper()
	var all []byte
	for _, p := range []string{dbPath, dbPath + "-wal", dbPath + "-shm", dbPath + "-journal"} {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if len(all) == 0 {
		t.Fatalf("no database bytes at %s", dbPath)
	}
	return all
}

// gwToolServer is an MCP server called name serving tools over Streamable
// HTTP (both eras) on a loopback test server, stopped when the test ends.
// It returns its URL.
func gwToolServer(t *testing.T, name string, tools ...*mcp.Tool) string {
	t.Helper()
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: name, Version: "1"}})
	if err := s.AddTools(tools...); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(s, mcphttp.Options{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.CloseClientConnections(); ts.Close() })
	return ts.URL
}
