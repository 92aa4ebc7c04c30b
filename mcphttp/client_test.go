// client_test.go pins the client Conns against real peers: the official Go
// SDK's Streamable HTTP and SSE servers, and our own legacy server for
// byte fidelity.

package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
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

func dialStreamable(ctx context.Context, t *testing.T, p *sdkPeer) (*StreamableConn, *ourClient) {
	t.Helper()
	conn, err := DialStreamable(ctx, p.http.URL, ClientOptions{HTTPClient: p.http.Client()})
	if err != nil {
		t.Fatal(err)
	}
	c := newOurClient(t, conn)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	return conn, c
}

func TestClientStreamableAgainstSDKServer(t *testing.T) {
	for _, mode := range []struct {
		name string
		json bool
	}{{"event-stream answers", false}, {"JSON answers", true}} {
		t.Run(mode.name, func(t *testing.T) {
			verifyNoLeaks(t)
			ctx := testCtx(t)
			p := newSDKStreamablePeer(t, &sdk.StreamableHTTPOptions{JSONResponse: mode.json})
			conn, c := dialStreamable(ctx, t, p)
			sessionID := conn.SessionID()
			if sessionID == "" {
				t.Fatal("no session id captured from the initialize answer")
			}
			if v := c.ProtocolVersion(); v != mcp.Version20251125 {
				t.Errorf("negotiated %q", v)
			}

			if got := c.callTool(ctx, t, `{"name":"echo","arguments":{"text":"hi"}}`); got != "echo: hi" {
				t.Errorf("echo = %q", got)
			}
			if mode.json {
				// With JSON answers the SDK sends progress on the standalone
				// stream, and drops it if that is not open yet.
				select {
				case <-p.listening:
				case <-ctx.Done():
					t.Fatal("the standalone stream never opened")
				}
			}
			if got := c.callTool(ctx, t, `{"name":"progress","_meta":{"progressToken":"tok-1"}}`); got != "done" {
				t.Errorf("progress = %q", got)
			}
			n := c.notification(ctx, t, "notifications/progress")
			if tok, _ := jsonrpc.LookupString(n.Params, "progressToken"); tok != "tok-1" {
				t.Errorf("progress params = %s", n.Params)
			}
			if got := c.callTool(ctx, t, `{"name":"sample"}`); got != "sampled: from our client" || c.sampled.Load() != 1 {
				t.Errorf("sample = %q after %d sampling requests", got, c.sampled.Load())
			}

			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case id := <-p.deleted:
				if id != sessionID {
					t.Errorf("DELETE for %q, want %q", id, sessionID)
				}
			default:
				t.Error("Close sent no DELETE")
			}
			checkHeaders(t, p.requests(), sessionID)
		})
	}
}

// checkHeaders pins the headers: none on the initialize POST, the session
// id and the negotiated revision on everything after it.
func checkHeaders(t *testing.T, seen []seenRequest, sessionID string) {
	t.Helper()
	if len(seen) < 3 {
		t.Fatalf("only %d requests seen", len(seen))
	}
	if first := seen[0]; first.method != http.MethodPost || first.sessionID != "" || first.protocolVersion != "" {
		t.Errorf("initialize POST carried %+v", first)
	}
	methods := map[string]bool{}
	for _, r := range seen[1:] {
		methods[r.method] = true
		if r.sessionID != sessionID || r.protocolVersion != mcp.Version20251125 {
			t.Errorf("%s carried session %q version %q", r.method, r.sessionID, r.protocolVersion)
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		if !methods[m] {
			t.Errorf("no %s after initialize", m)
		}
	}
}

func TestClientStreamableResumesABrokenStream(t *testing.T) {
	verifyNoLeaks(t)
	ctx := testCtx(t)
	p := newSDKStreamablePeer(t, &sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)})
	_, c := dialStreamable(ctx, t, p)
	if got := c.callTool(ctx, t, `{"name":"drop"}`); got != "after the break" {
		t.Errorf("drop = %q", got)
	}
	resumed := false
	for _, r := range p.requests() {
		resumed = resumed || (r.method == http.MethodGet && r.lastEventID != "")
	}
	if !resumed {
		t.Error("the answer came without a GET carrying Last-Event-ID")
	}
}

func TestClientStreamableReconnectsTheStandaloneStream(t *testing.T) {
	verifyNoLeaks(t)
	ctx := testCtx(t)
	// JSON answers put progress on the standalone stream; the event store
	// gives its events ids and replays what a reconnecting client missed.
	p := newSDKStreamablePeer(t, &sdk.StreamableHTTPOptions{JSONResponse: true, EventStore: sdk.NewMemoryEventStore(nil)})
	p.cutListen.Store(true)
	_, c := dialStreamable(ctx, t, p)
	select {
	case <-p.listening:
	case <-ctx.Done():
		t.Fatal("the standalone stream never opened")
	}
	for _, tok := range []string{"before-the-cut", "after-the-cut"} {
		c.callTool(ctx, t, `{"name":"progress","_meta":{"progressToken":"`+tok+`"}}`)
		n := c.notification(ctx, t, "notifications/progress")
		if got, _ := jsonrpc.LookupString(n.Params, "progressToken"); got != tok {
			t.Errorf("progress token %q, want %q", got, tok)
		}
	}
	resumed := false
	for _, r := range p.requests() {
		resumed = resumed || (r.method == http.MethodGet && r.lastEventID != "")
	}
	if !resumed {
		t.Error("the standalone stream was not resumed with Last-Event-ID")
	}
}

func TestClientStreamableBrokenStreamWithoutIDsFailsTheCall(t *testing.T) {
	verifyNoLeaks(t)
	ctx := testCtx(t)
	p := newSDKStreamablePeer(t, nil) // no event store: no ids, no resumption
	_, c := dialStreamable(ctx, t, p)
	_, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"drop"}`))
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError {
		t.Fatalf("err = %v, want a -32603 answer made up by the client", err)
	}
	if got := c.callTool(ctx, t, `{"name":"echo","arguments":{"text":"still here"}}`); got != "echo: still here" {
		t.Errorf("echo after the break = %q", got)
	}
}

func TestClientStreamableHTTPErrorsBecomeErrorAnswers(t *testing.T) {
	verifyNoLeaks(t)
	ctx := testCtx(t)
	p := newSDKStreamablePeer(t, nil)
	_, c := dialStreamable(ctx, t, p)

	t.Run("500 fails the call, not the connection", func(t *testing.T) {
		p.refuse.Store(http.StatusInternalServerError)
		_, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"text":"x"}}`))
		p.refuse.Store(0)
		wantHTTPStatus(t, err, http.StatusInternalServerError)
		if got := c.callTool(ctx, t, `{"name":"echo","arguments":{"text":"again"}}`); got != "echo: again" {
			t.Errorf("echo after a 500 = %q", got)
		}
	})
	t.Run("404 for the session fails the call and ends the connection", func(t *testing.T) {
		p.refuse.Store(http.StatusNotFound)
		_, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"text":"x"}}`))
		p.refuse.Store(0) // let Close's DELETE end the SDK's session
		// mcp.Client may see the connection end before it hands over the
		// answer queued ahead of that end; either way the call fails now.
		if !errors.Is(err, ErrSessionExpired) {
			wantHTTPStatus(t, err, http.StatusNotFound)
		}
		select {
		case <-c.Done():
		case <-ctx.Done():
			t.Fatal("the connection outlived its session")
		}
		if !errors.Is(c.Err(), ErrSessionExpired) {
			t.Errorf("Err = %v, want ErrSessionExpired", c.Err())
		}
	})
}

func wantHTTPStatus(t *testing.T, err error, status int) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError {
		t.Fatalf("err = %v, want a -32603 answer", err)
	}
	var data struct {
		HTTPStatus int `json:"httpStatus"`
	}
	if json.Unmarshal(je.Data, &data) != nil || data.HTTPStatus != status {
		t.Errorf("error data = %s, want httpStatus %d", je.Data, status)
	}
}

func TestClientStreamableCloseEndsReadAndWrite(t *testing.T) {
	verifyNoLeaks(t)
	ctx := testCtx(t)
	p := newSDKStreamablePeer(t, nil)
	conn, err := DialStreamable(ctx, p.http.URL, ClientOptions{HTTPClient: p.http.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(ctx); err != io.EOF {
		t.Errorf("Read after Close = %v, want io.EOF", err)
	}
	if err := conn.Write(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); !errors.Is(err, ErrConnClosed) {
		t.Errorf("Write after Close = %v, want ErrConnClosed", err)
	}
}

func TestClientSSEAgainstSDKServer(t *testing.T) {
	verifyNoLeaks(t)
	ctx := testCtx(t)
	s := newSDKServer()
	p := newSDKPeer(t, sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil))
	conn, err := DialSSE(ctx, p.http.URL+"/sse", ClientOptions{HTTPClient: p.http.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(conn.Endpoint(), p.http.URL+"/sse?sessionid=") {
		t.Errorf("endpoint = %q", conn.Endpoint())
	}
	c := newOurClient(t, conn)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.callTool(ctx, t, `{"name":"echo","arguments":{"text":"hi"}}`); got != "echo: hi" {
		t.Errorf("echo = %q", got)
	}
	if got := c.callTool(ctx, t, `{"name":"progress","_meta":{"progressToken":7}}`); got != "done" {
		t.Errorf("progress = %q", got)
	}
	if n := c.notification(ctx, t, "notifications/progress"); !strings.Contains(string(n.Params), `"progressToken":7`) {
		t.Errorf("progress params = %s", n.Params)
	}
	if got := c.callTool(ctx, t, `{"name":"sample"}`); got != "sampled: from our client" {
		t.Errorf("sample = %q", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(ctx); err != io.EOF {
		t.Errorf("Read after Close = %v, want io.EOF", err)
	}
}

func TestClientSSERefusesACrossOriginEndpoint(t *testing.T) {
	verifyNoLeaks(t)
	ctx := testCtx(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: endpoint\ndata: http://elsewhere.example/messages?sessionId=1\n\n")
	}))
	defer srv.Close()
	_, err := DialSSE(ctx, srv.URL+"/sse", ClientOptions{HTTPClient: srv.Client()})
	if !errors.Is(err, ErrCrossOriginEndpoint) {
		t.Errorf("err = %v, want ErrCrossOriginEndpoint", err)
	}
}

func TestClientSSEKeepsResultBytes(t *testing.T) {
	verifyNoLeaks(t)
	ctx := testCtx(t)
	f := newLegacyFixture(t, Options{})
	conn, err := DialSSE(ctx, f.url("/sse"), ClientOptions{HTTPClient: f.http.Client()})
	if err != nil {
		t.Fatal(err)
	}
	c := newOurClient(t, conn)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"raw"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(res) != rawFidelityResult {
		t.Errorf("result changed on the way:\n got %s\nwant %s", res, rawFidelityResult)
	}
}

func TestClientSSEEndpointMustShareTheStreamsOrigin(t *testing.T) {
	base, _ := parseHTTPURL("http://127.0.0.1:8080/mcp/sse")
	tests := []struct {
		endpoint string
		want     string // "" for refused
	}{
		{"/messages?sessionId=1", "http://127.0.0.1:8080/messages?sessionId=1"},
		{"messages?sessionId=1", "http://127.0.0.1:8080/mcp/messages?sessionId=1"},
		{"?sessionid=1", "http://127.0.0.1:8080/mcp/sse?sessionid=1"},
		{"http://127.0.0.1:8080/messages", "http://127.0.0.1:8080/messages"},
		{"http://127.0.0.1:9090/messages", ""},
		{"https://127.0.0.1:8080/messages", ""},
		{"http://evil.example:8080/messages", ""},
		{"//evil.example/messages", ""},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			r := sse.NewReader(strings.NewReader("event: endpoint\ndata: "+tt.endpoint+"\n\n"), 0)
			got, err := awaitEndpoint(r, base)
			switch {
			case tt.want == "" && !errors.Is(err, ErrCrossOriginEndpoint):
				t.Errorf("got %q, %v; want ErrCrossOriginEndpoint", got, err)
			case tt.want != "" && (err != nil || got != tt.want):
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	t.Run("default ports are the same origin", func(t *testing.T) {
		a, _ := parseHTTPURL("http://example.com/sse")
		b, _ := parseHTTPURL("http://EXAMPLE.com:80/messages")
		if !sameOrigin(a, b) {
			t.Error("http://example.com and http://EXAMPLE.com:80 are one origin")
		}
	})
	t.Run("a first event that is not the endpoint", func(t *testing.T) {
		r := sse.NewReader(strings.NewReader("event: message\ndata: {}\n\n"), 0)
		if _, err := awaitEndpoint(r, base); !errors.Is(err, ErrNoEndpoint) {
			t.Errorf("err = %v, want ErrNoEndpoint", err)
		}
	})
}
