// client_streamable_test.go pins StreamableConn against the official Go
// SDK's Streamable HTTP server: event-stream and JSON answers, the headers
// it sends, resuming a broken stream, reconnecting the standalone stream,
// HTTP errors turned into JSON-RPC error answers, and Close.

package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

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
			testkit.LeakCheck(t)
			ctx := testkit.Context(t)
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
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
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
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
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
	// The resuming GET may still be on its way when the second progress has
	// come (a client with no id yet reconnects twice); wait for it, bounded.
	resumed := func() bool {
		for _, r := range p.requests() {
			if r.method == http.MethodGet && r.lastEventID != "" {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(5 * time.Second)
	for !resumed() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded; there is no event to wait on
	}
	if !resumed() {
		t.Error("the standalone stream was not resumed with Last-Event-ID")
	}
}

func TestClientStreamableBrokenStreamWithoutIDsFailsTheCall(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
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
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
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
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
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
	if err := conn.Write(ctx, &jsonrpc.Message{ID: jsonrpc.ID("1"), Method: "ping"}); !errors.Is(err, ErrConnClosed) {
		t.Errorf("Write after Close = %v, want ErrConnClosed", err)
	}
}
