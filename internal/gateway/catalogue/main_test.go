// main_test.go holds the test rig: a real backend mcp.Server reached by a
// real mcp.Client over an in-memory Conn that moves bytes untouched, and a
// front mcp.Server driven through a Session as a transport would drive it.

package catalogue_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// prettyDef is a tool definition no typed struct could carry through:
// pretty-printed, unknown members, _meta, annotations, odd key order.
const prettyDef = `{
    "title": "Pretty",
    "name":  "pretty",
    "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "annotations": {"readOnlyHint": true},
    "_meta": {"vendor/x": [1, 2, 3]},
    "x-unknown": {"deep": 123456789012345678901234567890}
}`

// faithful is a pretty-printed result with integers beyond float64.
const faithful = `{
  "content": [ {"type": "text", "text": "x"} ],
  "structuredContent": {"big": 123456789012345678901234567890, "neg": -987654321098765432109876543210},
  "_meta": {"vendor/trace": "abc"},
  "unknownField": [1, {"nested": true}]
}`

// customError is a backend's own error, with a code outside the standard
// set and data a typed struct would reshape.
const customError = `{"code": -32099, "message": "quota exceeded", "data": {"retryAfter": 12, "big": 123456789012345678901234567890}}`

// backendServer is one backend: its server and what its tools saw.
type backendServer struct {
	*mcp.Server
	args  chan json.RawMessage // arguments echo received
	metas chan json.RawMessage // _meta of the params echo received
}

func newBackendServer(t testing.TB, label string, pageSize int) *backendServer {
	t.Helper()
	b := &backendServer{
		Server: mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: label, Version: "1"}, PageSize: pageSize}),
		args:   make(chan json.RawMessage, 16),
		metas:  make(chan json.RawMessage, 16),
	}
	text := func(s string) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(s)}})
	}
	must(t, b.AddTools(
		&mcp.Tool{Name: "pretty", Definition: json.RawMessage(prettyDef),
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) { return text("pretty") }},
		&mcp.Tool{Name: "echo", Description: "Records its arguments",
			Handler: func(_ context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
				meta, _ := jsonrpc.Lookup(r.Params, "_meta")
				b.args <- append(json.RawMessage(nil), args...)
				b.metas <- append(json.RawMessage(nil), meta...)
				return text("echoed")
			}},
		&mcp.Tool{Name: "whoami", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return text(label)
		}},
		&mcp.Tool{Name: "faithful", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(faithful), nil
		}},
		&mcp.Tool{Name: "fail", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return nil, jsonrpc.RawError(json.RawMessage(customError))
		}},
	))
	must(t, b.AddResources(&mcp.Resource{URI: "mem://a", Name: "a", MimeType: "text/plain",
		Read: func(_ context.Context, _ *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
			return json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"` + label + ` a"}]}`), nil
		}}))
	must(t, b.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: "mem://items/{id}", Name: "item",
		Read: func(_ context.Context, _ *mcp.Request, uri string, vars map[string]string) (json.RawMessage, error) {
			return json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"item ` + vars["id"] + `"}]}`), nil
		}}))
	must(t, b.AddPrompts(&mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}},
		Get: func(_ context.Context, _ *mcp.Request, args map[string]string) (json.RawMessage, error) {
			return json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hello ` + args["who"] + `"}}]}`), nil
		}}))
	return b
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// memConn connects a Client to a Server in memory. Unlike stdio it does
// not compact whitespace, so byte-identity can be checked exactly.
type memConn struct {
	ss   *mcp.Session
	in   chan []byte
	done chan struct{}
	once sync.Once
}

func (c *memConn) Send(_ context.Context, msg []byte) error {
	select {
	case c.in <- append([]byte(nil), msg...):
		return nil
	case <-c.done:
		return io.ErrClosedPipe
	}
}

func (c *memConn) Write(ctx context.Context, msg *jsonrpc.Message) error {
	select {
	case <-c.done:
		return io.ErrClosedPipe
	default:
	}
	m := msg.Clone() // the caller's again once Write returns
	go func() {
		if answer := c.ss.Handle(context.WithoutCancel(ctx), m, c); answer != nil {
			_ = c.Send(ctx, answer)
		}
	}()
	return nil
}

func (c *memConn) Read(ctx context.Context) (*jsonrpc.Message, error) {
	select {
	case msg := <-c.in:
		return jsonrpc.Parse(msg)
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *memConn) Close() error {
	c.once.Do(func() { close(c.done); c.ss.Close() })
	return nil
}

// connect returns an initialized client of s.
func connect(t testing.TB, s *mcp.Server) *mcp.Client {
	t.Helper()
	conn := &memConn{in: make(chan []byte, 1024), done: make(chan struct{})}
	conn.ss = s.NewSession(mcp.SessionOptions{ID: "mem", Out: conn})
	return initClient(t, conn)
}

func initClient(t testing.TB, conn mcp.Conn) *mcp.Client {
	t.Helper()
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "relay-test", Version: "1"}})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// front is the gateway side: a server and one initialized client session.
type front struct {
	*mcp.Server
	ss  *mcp.Session
	out *mcptest.Recorder
}

func newFront(t testing.TB) *front {
	t.Helper()
	return newFrontCaps(t, "{}")
}

// newFrontCaps is newFront with a client that declared capabilities.
func newFrontCaps(t testing.TB, capabilities string) *front {
	t.Helper()
	f := &front{Server: mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "front", Version: "1"}}), out: &mcptest.Recorder{}}
	f.ss = f.NewSession(mcp.SessionOptions{ID: "front", Out: f.out})
	t.Cleanup(f.ss.Close)
	f.result(t, "initialize", `{"protocolVersion":"`+mcp.LatestVersion+`","capabilities":`+capabilities+`,"clientInfo":{"name":"t","version":"1"}}`)
	f.ss.Handle(context.Background(), request(t, nil, "notifications/initialized", ""), nil)
	f.out.Take("")
	return f
}

var lastID atomic.Int64

func request(t testing.TB, id jsonrpc.ID, method, params string) *jsonrpc.Message {
	t.Helper()
	var raw json.RawMessage
	if params != "" {
		raw = json.RawMessage(params)
	}
	m, err := jsonrpc.Parse(jsonrpc.AppendRequest(nil, id, method, raw))
	if err != nil {
		t.Fatalf("bad request %s %s: %v", method, params, err)
	}
	return m
}

// call sends one request to the front and returns its answer.
func (f *front) call(t testing.TB, method, params string) *jsonrpc.Message {
	t.Helper()
	id := jsonrpc.ID(strconv.FormatInt(lastID.Add(1), 10))
	answer := f.ss.Handle(context.Background(), request(t, id, method, params), &mcptest.Recorder{})
	if answer == nil {
		t.Fatalf("%s: no answer", method)
	}
	m, err := jsonrpc.Parse(answer)
	if err != nil {
		t.Fatalf("%s: bad answer %s: %v", method, answer, err)
	}
	return m
}

func (f *front) result(t testing.TB, method, params string) json.RawMessage {
	t.Helper()
	m := f.call(t, method, params)
	if m.Kind() != jsonrpc.KindResult {
		t.Fatalf("%s %s: want a result, got error %s", method, params, m.Error)
	}
	return m.Result
}

// list returns every entry of a front list (all pages), raw.
func (f *front) list(t testing.TB, method, field string) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	params := ""
	for {
		res := f.result(t, method, params)
		var page []json.RawMessage
		raw, _ := jsonrpc.Lookup(res, field)
		must(t, json.Unmarshal(raw, &page))
		all = append(all, page...)
		cursor, ok := jsonrpc.LookupString(res, "nextCursor")
		if !ok {
			return all
		}
		params = `{"cursor":"` + cursor + `"}`
	}
}

// names returns the key member of each entry.
func names(entries []json.RawMessage, key string) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i], _ = jsonrpc.LookupString(e, key)
	}
	return out
}

// toolText returns the first text block of a tools/call result.
func toolText(t testing.TB, res json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	must(t, json.Unmarshal(res, &r))
	if len(r.Content) == 0 || r.IsError {
		t.Fatalf("unexpected tool result %s", res)
	}
	return r.Content[0].Text
}

// logBuffer collects a logger's output.
type logBuffer struct{ testkit.Output }

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// relayed syncs a new backend (label b1 unless given) into a new front.
func relayed(t testing.TB, opts catalogue.Options) (*front, *backendServer, *catalogue.Mirror, *mcp.Client) {
	t.Helper()
	bs := newBackendServer(t, "b1", 0)
	client := connect(t, bs.Server)
	f := newFront(t)
	b := catalogue.New("b1", client, opts)
	must(t, b.Sync(context.Background(), f.Server))
	return f, bs, b, client
}
