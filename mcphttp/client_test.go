// client_test.go holds the peers the client Conns are tested against: the
// official Go SDK's MCP server behind a middleware that records what it
// was sent and can refuse or cut streams (sdkPeer), and our mcp.Client on
// a Conn, answering sampling and recording notifications (ourClient).

package mcphttp

//lint:file-ignore SA1019 the official Go SDK is a test peer here: its sampling and logging, deprecated in 2026-07-28, are what these tests relay to 2025-era clients.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// seenRequest is what the SDK server was sent, as recorded in front of it.
type seenRequest struct {
	method, sessionID, protocolVersion, lastEventID string
}

// sdkPeer is the Go SDK's MCP server behind a recording middleware.
type sdkPeer struct {
	http *httptest.Server

	mu        sync.Mutex
	seen      []seenRequest
	listening chan struct{} // closed when a standalone GET stream is up
	listenOne sync.Once
	deleted   chan string  // session ids of DELETEs
	refuse    atomic.Int32 // when non-zero, POSTs with a session id get this status
	cutListen atomic.Bool  // end the first standalone stream after its first event
}

// newSDKServer is an SDK server with tools for every client feature.
func newSDKServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "sdk-server", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return text("echo: " + in.Text), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "progress"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
			ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 2, Message: "half way"})
		return text("done"), nil, err
	})
	sdk.AddTool(s, &sdk.Tool{Name: "sample"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, nil, err
		}
		tc, _ := res.Content.(*sdk.TextContent)
		return text("sampled: " + tc.Text), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "drop"}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{}) // the answer comes after the break
		return text("after the break"), nil, nil
	})
	return s
}

func newSDKPeer(t *testing.T, h http.Handler) *sdkPeer {
	t.Helper()
	p := &sdkPeer{listening: make(chan struct{}), deleted: make(chan string, 4)}
	p.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		sid := r.Header.Get(HeaderSessionID)
		if st := int(p.refuse.Load()); st != 0 && r.Method == http.MethodPost && sid != "" {
			http.Error(w, http.StatusText(st), st)
			return
		}
		if r.Method == http.MethodDelete {
			p.deleted <- sid
		}
		if r.Method == http.MethodGet && r.Header.Get(headerLastEventID) == "" {
			w = &flushSignal{ResponseWriter: w, flushed: func() { p.listenOne.Do(func() { close(p.listening) }) }}
			if p.cutListen.CompareAndSwap(true, false) {
				ctx, cancel := context.WithCancel(r.Context())
				defer cancel()
				r = r.WithContext(ctx)
				w = &cutAfterEvent{ResponseWriter: w, cut: cancel}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(p.http.Close)
	return p
}

func newSDKStreamablePeer(t *testing.T, opts *sdk.StreamableHTTPOptions) *sdkPeer {
	s := newSDKServer()
	return newSDKPeer(t, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, opts))
}

func (p *sdkPeer) record(r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, seenRequest{r.Method, r.Header.Get(HeaderSessionID),
		r.Header.Get(HeaderProtocolVersion), r.Header.Get(headerLastEventID)})
}

func (p *sdkPeer) requests() []seenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seenRequest(nil), p.seen...)
}

// flushSignal reports the first flush of a standalone stream: from then
// on, the SDK server delivers to it.
type flushSignal struct {
	http.ResponseWriter
	flushed func()
}

func (f *flushSignal) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
	f.flushed()
}

func (f *flushSignal) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// cutAfterEvent ends a stream (by cancelling its request) once it has
// carried one event, as a proxy timing it out would.
type cutAfterEvent struct {
	http.ResponseWriter
	cut context.CancelFunc
}

func (c *cutAfterEvent) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	if strings.Contains(string(b), "data:") {
		c.cut()
	}
	return n, err
}

func (c *cutAfterEvent) Flush() { _ = http.NewResponseController(c.ResponseWriter).Flush() }

func (c *cutAfterEvent) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// ourClient is mcp.Client on a Conn, recording notifications and answering
// sampling requests.
type ourClient struct {
	*mcp.Client
	notes   chan *jsonrpc.Message
	sampled atomic.Int32
}

func newOurClient(t *testing.T, conn mcp.Conn) *ourClient {
	t.Helper()
	c := &ourClient{notes: make(chan *jsonrpc.Message, 16)}
	c.Client = mcp.NewClient(conn, mcp.ClientOptions{
		Info:         mcp.Implementation{Name: "mcpgate-client", Version: "0"},
		Capabilities: json.RawMessage(`{"sampling":{}}`),
		OnRequest: func(_ context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
			if m.Method != "sampling/createMessage" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s here", m.Method)
			}
			c.sampled.Add(1)
			return json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"from our client"}}`), nil
		},
		OnNotification: func(m *jsonrpc.Message) { c.notes <- m },
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// callTool calls a tool and returns the text of its first content block.
func (c *ourClient) callTool(ctx context.Context, t *testing.T, params string) string {
	t.Helper()
	res, err := c.Call(ctx, "tools/call", json.RawMessage(params))
	if err != nil {
		t.Fatalf("tools/call %s: %v", params, err)
	}
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("result %s: %v", res, err)
	}
	return r.Content[0].Text
}

// notification waits for the next notification of the given method.
func (c *ourClient) notification(ctx context.Context, t *testing.T, method string) *jsonrpc.Message {
	t.Helper()
	for {
		select {
		case m := <-c.notes:
			if m.Method == method {
				return m
			}
		case <-ctx.Done():
			t.Fatalf("no %s notification", method)
		}
	}
}
