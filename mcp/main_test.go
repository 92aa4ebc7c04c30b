// main_test.go holds what every test of the engine shares: a leak check,
// a Sink that records what the server sends, and helpers that drive a
// Session exactly as a transport does — bytes in through jsonrpc.Parse and
// Session.Handle, bytes out through the answer and the sinks.

package mcp_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// waitLimit bounds every wait on another goroutine. It is a safety net that
// turns a deadlock into a failure, never a way to let time pass.
const waitLimit = 10 * time.Second

// recorder is a Sink that keeps every message sent to it, in order, and
// hands each one to a waiter as well.
type recorder struct {
	mu   sync.Mutex
	msgs [][]byte
	ch   chan []byte
}

func newRecorder() *recorder { return &recorder{ch: make(chan []byte, 4096)} }

func (r *recorder) Send(_ context.Context, msg []byte) error {
	c := append([]byte(nil), msg...)
	r.mu.Lock()
	r.msgs = append(r.msgs, c)
	r.mu.Unlock()
	select {
	case r.ch <- c:
	default:
	}
	return nil
}

// messages returns every message recorded so far, parsed.
func (r *recorder) messages(t testing.TB) []*jsonrpc.Message {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*jsonrpc.Message, 0, len(r.msgs))
	for _, b := range r.msgs {
		out = append(out, mustParse(t, b))
	}
	return out
}

// methods returns the method of every recorded message.
func (r *recorder) methods(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, m := range r.messages(t) {
		out = append(out, m.Method)
	}
	return out
}

// next waits for the next message sent to r.
func (r *recorder) next(t testing.TB) *jsonrpc.Message {
	t.Helper()
	select {
	case b := <-r.ch:
		return mustParse(t, b)
	case <-time.After(waitLimit):
		t.Fatal("no message sent to the sink")
		return nil
	}
}

func mustParse(t testing.TB, b []byte) *jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.Parse(b)
	if err != nil {
		t.Fatalf("server sent an unparseable message %s: %v", b, err)
	}
	return m
}

var lastID atomic.Int64

func nextID() jsonrpc.ID { return jsonrpc.ID(strconv.FormatInt(lastID.Add(1), 10)) }

// newServer builds a server for one test.
func newServer(t testing.TB, opts mcp.Options) *mcp.Server {
	t.Helper()
	if opts.Info.Name == "" {
		opts.Info = mcp.Implementation{Name: "mcp-test", Version: "0.0.1"}
	}
	return mcp.NewServer(opts)
}

// newSession opens a session that the test closes when it ends.
func newSession(t testing.TB, s *mcp.Server, o mcp.SessionOptions) *mcp.Session {
	t.Helper()
	ss := s.NewSession(o)
	t.Cleanup(ss.Close)
	return ss
}

// readySession opens a session with a recorded standalone stream and
// initializes it with the latest revision.
func readySession(t testing.TB, s *mcp.Server) (*mcp.Session, *recorder) {
	t.Helper()
	out := newRecorder()
	ss := newSession(t, s, mcp.SessionOptions{ID: "sess-" + string(nextID()), Out: out})
	initialize(t, ss, mcp.LatestVersion)
	return ss, out
}

func initialize(t testing.TB, ss *mcp.Session, version string) json.RawMessage {
	t.Helper()
	params := `{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`
	return result(t, call(t, ss, "initialize", params))
}

// call sends one request to the session and returns the parsed answer.
// Messages related to the request go to a throwaway sink.
func call(t testing.TB, ss *mcp.Session, method, params string) *jsonrpc.Message {
	t.Helper()
	return callWith(t, ss, newRecorder(), method, params)
}

// callWith sends one request, sending related messages to sink.
func callWith(t testing.TB, ss *mcp.Session, sink mcp.Sink, method, params string) *jsonrpc.Message {
	t.Helper()
	id := nextID()
	answer := ss.Handle(context.Background(), request(t, id, method, params), sink)
	if answer == nil {
		t.Fatalf("%s: no answer to a request", method)
	}
	m := mustParse(t, answer)
	if string(m.ID) != string(id) {
		t.Fatalf("%s: answer id %s, want %s", method, m.ID, id)
	}
	return m
}

// request builds a parsed request (a notification when id is nil).
func request(t testing.TB, id jsonrpc.ID, method, params string) *jsonrpc.Message {
	t.Helper()
	var raw json.RawMessage
	if params != "" {
		raw = json.RawMessage(params)
	}
	m, err := jsonrpc.Parse(jsonrpc.AppendRequest(nil, id, method, raw))
	if err != nil {
		t.Fatalf("bad test request %s %s: %v", method, params, err)
	}
	return m
}

// notify hands the session a notification from the client.
func notify(t testing.TB, ss *mcp.Session, method, params string) {
	t.Helper()
	if answer := ss.Handle(context.Background(), request(t, nil, method, params), nil); answer != nil {
		t.Fatalf("%s: a notification was answered: %s", method, answer)
	}
}

func result(t testing.TB, m *jsonrpc.Message) json.RawMessage {
	t.Helper()
	if m.Kind() != jsonrpc.KindResult {
		t.Fatalf("want a result, got error %s", m.Error)
	}
	return m.Result
}

// rpcError asserts m is an error answer with code and returns it.
func rpcError(t testing.TB, m *jsonrpc.Message, code int64) *jsonrpc.Error {
	t.Helper()
	if m.Kind() != jsonrpc.KindError {
		t.Fatalf("want error %d, got result %s", code, m.Result)
	}
	e, err := m.ErrorObject()
	if err != nil {
		t.Fatalf("error object %s: %v", m.Error, err)
	}
	if e.Code != code {
		t.Fatalf("error code %d (%s), want %d", e.Code, m.Error, code)
	}
	return e
}

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// toolResult is the shape of a tools/call result as a client reads it.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// text returns the text of a single-block tool result.
func (r toolResult) text(t testing.TB) string {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("want one text block, got %+v", r.Content)
	}
	return r.Content[0].Text
}

// textTool is a tool answering a fixed text.
func textTool(name, text string) *mcp.Tool {
	return &mcp.Tool{Name: name, Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}})
	}}
}

func mustAdd(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wait receives from ch or fails the test.
func wait[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}
