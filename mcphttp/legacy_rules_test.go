// legacy_rules_test.go pins the rules of the legacy HTTP+SSE transport
// itself with a raw HTTP peer (legacyPeer): the endpoint event comes
// first, refused POSTs get their status codes, accepted ones are answered
// on the stream, keep-alives flow, a hang-up or Close ends the session,
// batches follow the revision, and a closed stream refuses to send.

package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/sse"
)

// legacyPeer is a raw HTTP client of the legacy transport.
type legacyPeer struct {
	t        *testing.T
	f        *legacyFixture
	identity string
	events   *sse.Reader
	raw      *bufio.Reader // the same body, for tests that read lines
	endpoint string
	hangUp   context.CancelFunc
}

// openLegacyStream GETs the stream as identity and reads the endpoint.
func openLegacyStream(t *testing.T, f *legacyFixture, identity string) *legacyPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url("/sse"), nil)
	req.Header.Set("Accept", "text/event-stream")
	if identity != "" {
		req.Header.Set("X-Test-Identity", identity)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	p := &legacyPeer{t: t, f: f, identity: identity, hangUp: cancel}
	t.Cleanup(func() {
		cancel()
		_ = resp.Body.Close()
	})
	if resp.StatusCode != http.StatusOK || mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
		t.Fatalf("GET: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	p.raw = bufio.NewReader(resp.Body)
	p.events = sse.NewReader(p.raw, 0)
	ev, err := p.events.Next()
	if err != nil {
		t.Fatal(err)
	}
	if ev.Name != "endpoint" {
		t.Fatalf("first event is %q, want endpoint", ev.Name)
	}
	p.endpoint = string(ev.Data)
	return p
}

func (p *legacyPeer) sessionID() string {
	_, id, _ := strings.Cut(p.endpoint, "?sessionId=")
	return id
}

// post sends body to the endpoint (or to target, if given) and returns
// the status and the answer's body.
func (p *legacyPeer) post(target, contentType, body string) (int, http.Header, string) {
	p.t.Helper()
	if target == "" {
		target = p.endpoint
	}
	req, _ := http.NewRequest(http.MethodPost, p.f.url(target), strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if p.identity != "" {
		req.Header.Set("X-Test-Identity", p.identity)
	}
	resp, err := p.f.http.Client().Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// next reads the next message event from the stream.
func (p *legacyPeer) next() *jsonrpc.Message {
	p.t.Helper()
	ev, err := p.events.Next()
	if err != nil {
		p.t.Fatal(err)
	}
	if ev.Name != "message" {
		p.t.Fatalf("event %q, want message", ev.Name)
	}
	if jsonrpc.IsBatch(ev.Data) {
		return &jsonrpc.Message{Result: ev.Data} // the caller looks at the array
	}
	m, err := jsonrpc.Parse(ev.Data)
	if err != nil {
		p.t.Fatalf("bad message %s: %v", ev.Data, err)
	}
	return m
}

// initialize performs the handshake at revision version.
func (p *legacyPeer) initialize(version string) {
	p.t.Helper()
	if st, _, _ := p.post("", "application/json", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+
		version+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`); st != http.StatusAccepted {
		p.t.Fatalf("initialize: %d", st)
	}
	if m := p.next(); m.Result == nil {
		p.t.Fatalf("initialize answered %s", m.Error)
	}
	if st, _, _ := p.post("", "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != http.StatusAccepted {
		p.t.Fatalf("initialized: %d", st)
	}
}

func TestLegacyFirstEventIsEndpoint(t *testing.T) {
	testkit.LeakCheck(t)
	f := newLegacyFixture(t, Options{})
	p := openLegacyStream(t, f, "")
	if !strings.HasPrefix(p.endpoint, "/messages?sessionId=") || p.sessionID() == "" {
		t.Errorf("endpoint = %q, want /messages?sessionId=ID", p.endpoint)
	}
	custom := newLegacyFixture(t, Options{MessagesPath: "/mcp/messages"})
	if p := openLegacyStream(t, custom, ""); !strings.HasPrefix(p.endpoint, "/mcp/messages?sessionId=") {
		t.Errorf("endpoint = %q, want MessagesPath honoured", p.endpoint)
	}
}

func TestLegacyPostRules(t *testing.T) {
	testkit.LeakCheck(t)
	f := newLegacyFixture(t, Options{MaxBodyBytes: 1024})
	alice := openLegacyStream(t, f, "alice")
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	tests := []struct {
		name        string
		identity    string
		target      string
		contentType string
		body        string
		status      int
		wantBody    string
	}{
		{"missing sessionId is 400", "alice", "/messages", "application/json", ping, http.StatusBadRequest, "sessionId"},
		{"unknown session is 404", "alice", "/messages?sessionId=nope", "application/json", ping, http.StatusNotFound, ""},
		{"another identity's session is 404", "mallory", alice.endpoint, "application/json", ping, http.StatusNotFound, ""},
		{"anonymous caller of a bound session is 404", "", alice.endpoint, "application/json", ping, http.StatusNotFound, ""},
		{"wrong Content-Type is 415", "alice", alice.endpoint, "text/plain", ping, http.StatusUnsupportedMediaType, ""},
		{"body over the limit is 413", "alice", alice.endpoint, "application/json",
			`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`,
			http.StatusRequestEntityTooLarge, ""},
		{"invalid JSON is 400 with -32700", "alice", alice.endpoint, "application/json", `{"jsonrpc":`, http.StatusBadRequest, `"code":-32700`},
		{"JSON that is not JSON-RPC is 400 with -32600", "alice", alice.endpoint, "application/json", `{"id":1}`, http.StatusBadRequest, `"code":-32600`},
		{"empty batch is 400 with -32600", "alice", alice.endpoint, "application/json", `[]`, http.StatusBadRequest, `"code":-32600`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &legacyPeer{t: t, f: f, identity: tt.identity}
			st, _, body := p.post(tt.target, tt.contentType, tt.body)
			if st != tt.status || !strings.Contains(body, tt.wantBody) {
				t.Errorf("got %d %q, want %d containing %q", st, body, tt.status, tt.wantBody)
			}
		})
	}
	t.Run("other methods are 405 with Allow", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPut, f.url("/messages"), nil)
		resp, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, POST" {
			t.Errorf("got %d Allow=%q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
	t.Run("no refusal reached the stream", func(t *testing.T) {
		if st, _, _ := alice.post("", "application/json", ping); st != http.StatusAccepted {
			t.Fatalf("ping: %d", st)
		}
		if m := alice.next(); string(m.ID) != "1" || string(m.Result) != "{}" {
			t.Errorf("first message on the stream: id %s result %s", m.ID, m.Result)
		}
	})
}

func TestLegacyPostIsAcceptedAndAnsweredOnTheStream(t *testing.T) {
	testkit.LeakCheck(t)
	f := newLegacyFixture(t, Options{})
	p := openLegacyStream(t, f, "")
	p.initialize(mcp.Version20241105)
	st, _, body := p.post("", "application/json",
		`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"later"}}}`)
	if st != http.StatusAccepted || body != "" {
		t.Fatalf("POST answered %d %q, want 202 and no body", st, body)
	}
	m := p.next()
	text, _ := jsonrpc.Lookup(m.Result, "content")
	if string(m.ID) != `"call-1"` || !strings.Contains(string(text), "echo: later") {
		t.Errorf("stream carried id %s result %s", m.ID, m.Result)
	}
}

func TestLegacyKeepAlive(t *testing.T) {
	testkit.LeakCheck(t)
	f := newLegacyFixture(t, Options{KeepAlive: 5 * time.Millisecond})
	p := openLegacyStream(t, f, "")
	for {
		line, err := p.raw.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == ": keepalive\n" {
			return
		}
	}
}

func TestLegacyDisconnectClosesSession(t *testing.T) {
	testkit.LeakCheck(t)
	f := newLegacyFixture(t, Options{})
	ctx := testkit.Context(t)
	p := openLegacyStream(t, f, "")
	p.initialize(mcp.Version20241105)
	if st, _, _ := p.post("", "application/json", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}`); st != http.StatusAccepted {
		t.Fatalf("tools/call: %d", st)
	}
	select {
	case <-f.started:
	case <-ctx.Done():
		t.Fatal("the tool never started")
	}
	if n := f.server.Sessions(); n != 1 {
		t.Fatalf("sessions = %d, want 1", n)
	}
	p.hangUp()
	select {
	case id := <-f.ended:
		if id != p.sessionID() {
			t.Errorf("ended session %q, want %q", id, p.sessionID())
		}
	case <-ctx.Done():
		t.Fatal("session did not end when the client hung up")
	}
	select {
	case <-f.cancelled:
	case <-ctx.Done():
		t.Fatal("the request in flight was not cancelled")
	}
	if n := f.server.Sessions(); n != 0 {
		t.Errorf("sessions = %d after hang-up, want 0", n)
	}
	q := &legacyPeer{t: t, f: f}
	if st, _, _ := q.post(p.endpoint, "application/json", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); st != http.StatusNotFound {
		t.Errorf("POST to the ended session: %d, want 404", st)
	}
}

func TestLegacyCloseEndsSessions(t *testing.T) {
	testkit.LeakCheck(t)
	f := newLegacyFixture(t, Options{})
	p := openLegacyStream(t, f, "")
	if err := f.handler.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.events.Next(); err == nil {
		t.Error("the stream carried on after Close")
	}
	if n := f.server.Sessions(); n != 0 {
		t.Errorf("sessions = %d after Close, want 0", n)
	}
	resp, err := f.http.Client().Get(f.url("/sse"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("GET after Close: %d, want 503", resp.StatusCode)
	}
}

func TestLegacyBatchOnlyWhereTheRevisionAllows(t *testing.T) {
	testkit.LeakCheck(t)
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	t.Run("2025-03-26 answers the batch as an array", func(t *testing.T) {
		p := openLegacyStream(t, newLegacyFixture(t, Options{}), "")
		p.initialize(mcp.Version20250326)
		if st, _, _ := p.post("", "application/json", batch); st != http.StatusAccepted {
			t.Fatalf("batch: %d", st)
		}
		var answers []json.RawMessage
		if err := json.Unmarshal(p.next().Result, &answers); err != nil || len(answers) != 2 {
			t.Fatalf("answers = %s (%v)", answers, err)
		}
	})
	t.Run("2024-11-05 refuses it with -32600", func(t *testing.T) {
		p := openLegacyStream(t, newLegacyFixture(t, Options{}), "")
		p.initialize(mcp.Version20241105)
		if st, _, _ := p.post("", "application/json", batch); st != http.StatusAccepted {
			t.Fatalf("batch: %d", st)
		}
		m := p.next()
		if e, err := m.ErrorObject(); err != nil || e.Code != jsonrpc.CodeInvalidRequest {
			t.Errorf("answer = %s, want -32600", m.Error)
		}
	})
}

func TestLegacyStreamSendAfterCloseFails(t *testing.T) {
	s := newLegacyStream(httptest.NewRecorder())
	if err := s.Send(context.Background(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	s.close()
	if err := s.Send(context.Background(), []byte(`{}`)); !errors.Is(err, errStreamClosed) {
		t.Errorf("Send after close = %v, want errStreamClosed", err)
	}
	if err := s.comment("keepalive"); !errors.Is(err, errStreamClosed) {
		t.Errorf("comment after close = %v, want errStreamClosed", err)
	}
}
