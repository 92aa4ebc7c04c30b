// conn_test.go pins what the wire connection answers itself,
// as an mcp.Conn seen from the client: initialize (echoed revision, the
// capabilities the wire carries, serverInfo from DIVERGE.md), ping while
// the proxy lives and not after, an empty template list, -32601 for the
// rest, and dropped notifications.

package wiremcp_test

import (
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
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/proxytest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/wire"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// wcProxy serves a proxy in front of the fixture, with info as its
// DIVERGE.md, and returns its URL and a kill that ends every connection.
func wcProxy(t *testing.T, info string) (string, func()) {
	t.Helper()
	up := proxytest.Upstream(t, fixture.New(fixture.Options{}))
	path := filepath.Join(t.TempDir(), "DIVERGE.md")
	if err := os.WriteFile(path, []byte(info), 0o600); err != nil {
		t.Fatal(err)
	}
	return proxytest.Serve(t, up, path)
}

func wcDial(t *testing.T, url string) (*wiremcp.Conn, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	c, err := wiremcp.Dial(ctx, url, wiremcp.DialOptions{Name: "be", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, ctx
}

// wcAsk writes one request and reads the next message.
func wcAsk(t *testing.T, ctx context.Context, c *wiremcp.Conn, id, method, params string) *jsonrpc.Message {
	t.Helper()
	var raw json.RawMessage
	if params != "" {
		raw = json.RawMessage(params)
	}
	if err := c.Write(ctx, &jsonrpc.Message{ID: jsonrpc.ID(id), Method: method, Params: raw}); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("%s: read: %v", method, err)
	}
	m, err := b, err
	if err != nil || string(m.ID) != id {
		t.Fatalf("%s: answer %s (%v)", method, b, err)
	}
	return m
}

// wcModernProxy is wcProxy with the fixture serving 2026-07-28 too.
func wcModernProxy(t *testing.T) string {
	t.Helper()
	url, _ := proxytest.Serve(t, proxytest.Modern(t, fixture.New(fixture.Options{})), filepath.Join(t.TempDir(), "none"))
	return url
}

// The connection answers initialize, ping and notifications itself; every
// other request goes to the proxy: the four exchanges on their tags, the
// rest on tag 9 (templates, prompts, completion, logging). A server that
// does not say its capabilities is declared all the wire carries.
func TestWireConnAnswersLocally(t *testing.T) {
	url, _ := wcProxy(t, "---\nname: demo-image\nversion: 1.2.3\n---\nA demo.\n")
	c, ctx := wcDial(t, url)

	m := wcAsk(t, ctx, c, "1", "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	want := `{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},` +
		`"prompts":{"listChanged":true},"completions":{},"logging":{}},"serverInfo":{"name":"demo-image","version":"1.2.3"}}`
	if string(m.Result) != want {
		t.Errorf("initialize = %s\nwant %s", m.Result, want)
	}
	// Notifications are dropped: nothing is answered, the next read is
	// the next request's answer.
	for _, n := range []string{"notifications/initialized", "notifications/cancelled"} {
		if err := c.Write(ctx, &jsonrpc.Message{Method: n, Params: json.RawMessage(`{"requestId":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if m := wcAsk(t, ctx, c, "2", "ping", ""); string(m.Result) != "{}" {
		t.Errorf("ping = %s %s", m.Result, m.Error)
	}
	for i, tc := range []struct{ method, params, want string }{
		{"resources/templates/list", "", `"uriTemplate":"test://template/{id}/data"`},
		{"prompts/list", "{}", `"test_simple_prompt"`},
		{"prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b"}}`, `"messages"`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"x"}}`, `"completion"`},
		{"logging/setLevel", `{"level":"debug"}`, `{}`},
		{"tools/call", `{"name":"test_simple_text","arguments":{}}`, "simple text"},
	} {
		m := wcAsk(t, ctx, c, "1"+string(rune('0'+i)), tc.method, tc.params)
		if m.Error != nil || !strings.Contains(string(m.Result), tc.want) {
			t.Errorf("%s = %s %s, want %s in the result", tc.method, m.Result, m.Error, tc.want)
		}
	}
	if m := wcAsk(t, ctx, c, "5", "prompts/get", `{"name":"no_such_prompt"}`); m.Error == nil {
		t.Errorf("prompts/get of no prompt = %s, want the server's error", m.Result)
	}
}

// A server of 2026-07-28 says its capabilities and instructions
// (server/discover, on tag 9): those are what initialize answers.
func TestWireConnDeclaresWhatAModernServerSays(t *testing.T) {
	c, ctx := wcDial(t, wcModernProxy(t))
	m := wcAsk(t, ctx, c, "1", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	// The tasks extension is the fixture's own to declare, at 2026-07-28
	// only: nothing but its discover answer puts it there.
	if m.Error != nil || !strings.Contains(string(m.Result), `"io.modelcontextprotocol/tasks"`) {
		t.Errorf("initialize = %s %s, want the capabilities the server discovered", m.Result, m.Error)
	}
}

// seedProxy is a proxy of the seed's wire alone (a fake: no real proxy
// refuses tag 9): it begins, has no Info, holds the notification stream,
// answers tools/list, and bare-finishes every other channel.
func seedProxy(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		_ = wire.Serve(r.Context(), ws, seedHandler{}, nil)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

type seedHandler struct{}

func (seedHandler) ServeScope(ctx context.Context, r *wire.Responder, _ []byte) {
	_ = r.Respond(wire.BeginAnswer{}.Append(nil))
	<-ctx.Done()
}

func (seedHandler) ServeChannel(ctx context.Context, r *wire.Responder, p []byte) {
	switch req, _ := wire.DecodeChannelRequest(p); req.(type) {
	case wire.Info:
		_ = r.Respond(wire.InfoAnswer{}.Append(nil))
	case wire.McpNotifications:
		<-ctx.Done()
	case wire.McpListTools:
		_ = r.Respond(wire.Response{Result: json.RawMessage(`{"tools":[]}`)}.Append(nil))
	}
}

// A proxy that does not serve tag 9 (an older one) bare-finishes it: the
// capabilities are the seed's four exchanges, and the other methods are
// -32601, as from a server without them.
func TestWireConnToAProxyWithoutTag9(t *testing.T) {
	url := seedProxy(t)
	c, ctx := wcDial(t, url)
	m := wcAsk(t, ctx, c, "1", "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	if !strings.Contains(string(m.Result), `"capabilities":{"tools":{"listChanged":true},"resources":{"listChanged":true}}`) {
		t.Errorf("initialize = %s, want the seed's capabilities", m.Result)
	}
	m = wcAsk(t, ctx, c, "2", "prompts/list", "{}")
	if e, err := m.ErrorObject(); err != nil || e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("prompts/list = %s %s, want -32601", m.Result, m.Error)
	}
}

// Without a DIVERGE.md, the server is named for the backend; an
// unsupported revision is answered with the latest.
func TestWireConnServerInfoDefaultsToTheBackendName(t *testing.T) {
	url, _ := wcProxy(t, "not front matter: just a readme\n")
	c, ctx := wcDial(t, url)
	m := wcAsk(t, ctx, c, "1", "initialize", `{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	var r struct {
		ProtocolVersion string
		ServerInfo      struct{ Name string }
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || r.ServerInfo.Name != "be" || r.ProtocolVersion == "1999-01-01" {
		t.Errorf("initialize = %s", m.Result)
	}
}

// Once the proxy is gone, ping fails (so Backend's liveness ping notices)
// and Read reports the end.
func TestWireConnPingFailsAfterTheProxyDies(t *testing.T) {
	url, kill := wcProxy(t, "")
	c, ctx := wcDial(t, url)
	if m := wcAsk(t, ctx, c, "1", "ping", ""); string(m.Result) != "{}" {
		t.Fatalf("ping = %s %s", m.Result, m.Error)
	}
	kill()
	_, err := c.Read(ctx)
	if err == nil || !strings.Contains(err.Error(), "proxy connection ended") || ctx.Err() != nil {
		t.Fatalf("Read after the proxy died: %v, want the connection's end", err)
	}
	if err := c.Write(ctx, &jsonrpc.Message{ID: jsonrpc.ID("2"), Method: "ping"}); err == nil {
		t.Error("ping after the proxy died was accepted")
	}
	// Closed by us, Read says io.EOF.
	url2, _ := wcProxy(t, "")
	c2, ctx2 := wcDial(t, url2)
	_ = c2.Close()
	if _, err := c2.Read(ctx2); !errors.Is(err, io.EOF) {
		t.Errorf("Read after Close = %v, want io.EOF", err)
	}
}

// Through the wire, a call's notifications come out of Read before its
// answer: 200 calls, alternately reporting progress and logging (three
// notifications each, all sent before the result).
func TestWireConnDeliversACallsNotificationsBeforeItsAnswer(t *testing.T) {
	url, _ := wcProxy(t, "")
	c, ctx := wcDial(t, url)
	wcWarmUp(t, ctx, c)
	logs := 0
	for i := range 200 {
		tool, token := "test_tool_with_progress", fmt.Sprintf("tok-%d", i)
		if i%2 == 1 {
			tool = "test_tool_with_logging"
		}
		id := fmt.Sprint(i + 1)
		params := `{"name":"` + tool + `","arguments":{},"_meta":{"progressToken":"` + token + `"}}`
		if err := c.Write(ctx, &jsonrpc.Message{ID: jsonrpc.ID(id), Method: "tools/call", Params: json.RawMessage(params)}); err != nil {
			t.Fatal(err)
		}
		progress := 0
		for {
			b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("call %d: read: %v", i, err)
			}
			m, err := b, err
			if err != nil {
				t.Fatalf("call %d: %s: %v", i, b, err)
			}
			if m.Kind() != jsonrpc.KindNotification {
				if string(m.ID) != id || m.Result == nil {
					t.Fatalf("call %d: answer %s", i, b)
				}
				break
			}
			tok, _ := jsonrpc.LookupString(m.Params, "progressToken")
			switch {
			case m.Method == "notifications/message":
				logs++
			case m.Method == "notifications/progress" && tok == token:
				progress++
			case m.Method == "notifications/progress":
				t.Fatalf("call %d: progress of an earlier call after its answer: %s", i, b)
			}
		}
		if tool == "test_tool_with_progress" && progress != 3 {
			t.Fatalf("call %d: %d of its 3 progress notifications before its answer", i, progress)
		}
		if want := 3 * ((i + 1) / 2); logs != want {
			t.Fatalf("call %d: %d log messages before its answer, want %d", i, logs, want)
		}
	}
}

// Nothing holds a notification back until an answer comes: a log message
// a tool sends while it runs comes out of Read while the call is still
// running, call after call (the tool returns only once the test has read
// its message).
func TestWireConnDeliversANotificationWhileItsCallRuns(t *testing.T) {
	release := make(chan struct{})
	s := fixture.New(fixture.Options{})
	if err := s.AddTools(&mcp.Tool{Name: "held", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		if err := r.Log(ctx, mcp.LevelInfo, "", "running"); err != nil {
			return nil, err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("released")}})
	}}); err != nil {
		t.Fatal(err)
	}
	c, ctx := wcDial(t, proxytest.For(t, s))
	defer c.Close()
	wcWarmUp(t, ctx, c)
	for i := range 10 {
		id := fmt.Sprint(i + 1)
		if err := c.Write(ctx, &jsonrpc.Message{ID: jsonrpc.ID(id), Method: "tools/call", Params: json.RawMessage(`{"name":"held","arguments":{}}`)}); err != nil {
			t.Fatal(err)
		}
		b, err := c.Read(ctx) // the tool is still waiting: this is its log
		if err != nil {
			t.Fatalf("call %d: no log message while the call runs: %v", i, err)
		}
		if m, err := b, err; err != nil || m.Method != "notifications/message" {
			t.Fatalf("call %d: %s, want its log message", i, b)
		}
		release <- struct{}{}
		if m := wcReadAnswer(t, ctx, c, id); !strings.Contains(string(m.Result), "released") {
			t.Fatalf("call %d: answer %s", i, m.Result)
		}
	}
}

func wcReadAnswer(t *testing.T, ctx context.Context, c *wiremcp.Conn, id string) *jsonrpc.Message {
	t.Helper()
	b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	m, err := b, err
	if err != nil || string(m.ID) != id {
		t.Fatalf("answer to %s: %s (%v)", id, b, err)
	}
	return m
}

// wcWarmUp makes sure the proxy's notification stream is open: it hears
// only what comes after its opening, which nothing announces, so calls
// that log are made until one message came through.
func wcWarmUp(t *testing.T, ctx context.Context, c *wiremcp.Conn) {
	t.Helper()
	for warm := 0; warm == 0; {
		if err := c.Write(ctx, &jsonrpc.Message{ID: jsonrpc.ID("0"), Method: "tools/call", Params: json.RawMessage(`{"name":"test_tool_with_logging","arguments":{}}`)}); err != nil {
			t.Fatal(err)
		}
		for {
			b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("warm-up: %v", err)
			}
			if m, err := b, err; err == nil && m.Kind() != jsonrpc.KindNotification {
				break
			}
			warm++
		}
	}
}

// A request the proxy's MCP server sends during a call (tag 12) reaches
// the client as a request under an id of the connection's own, and the
// client's answer to that id goes back to the server; an answer to an id
// nobody asked is dropped.
func TestWireConnRelaysServerRequestsAndTheirAnswers(t *testing.T) {
	url, _ := wcProxy(t, "")
	c, ctx := wcDial(t, url)
	wcAsk(t, ctx, c, "1", "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	if err := c.Write(ctx, &jsonrpc.Message{ID: jsonrpc.ID("2"), Method: "tools/call", Params: json.RawMessage(`{"name":"test_sampling","arguments":{"prompt":"hello"}}`)}); err != nil {
		t.Fatal(err)
	}
	b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	asked, err := b, err
	if err != nil || asked.Kind() != jsonrpc.KindRequest || asked.Method != "sampling/createMessage" || !strings.Contains(string(asked.Params), "hello") {
		t.Fatalf("the client was asked %s (%v), want sampling/createMessage with the prompt", b, err)
	}
	if err := c.Write(ctx, &jsonrpc.Message{ID: jsonrpc.ID(`"nobody-asked"`), Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("an answer to nothing asked: %v", err)
	}
	answer := `{"role":"assistant","content":{"type":"text","text":"from the client"},"model":"m"}`
	if err := c.Write(ctx, &jsonrpc.Message{ID: asked.ID, Result: json.RawMessage(answer)}); err != nil {
		t.Fatal(err)
	}
	if m := wcReadAnswer(t, ctx, c, "2"); !strings.Contains(string(m.Result), "from the client") {
		t.Errorf("tools/call = %s %s, want the client's sampling answer in it", m.Result, m.Error)
	}
}
