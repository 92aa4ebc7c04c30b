// client_sse_test.go pins the legacy HTTP+SSE client Conn: against the
// official Go SDK's SSE server, against our own legacy server for byte
// fidelity, and on the rule that the endpoint must share the stream's
// origin.

package mcphttp

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/sse"
)

func TestClientSSEAgainstSDKServer(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
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
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
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
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
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
