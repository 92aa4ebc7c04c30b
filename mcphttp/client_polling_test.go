// client_polling_test.go pins how the Streamable client meets servers that
// are not ours, over real sockets: a server that issued no session answers
// the standalone GET with 404, which is "no such stream", not "session
// expired"; and a server that polls (SEP-1699) sends a priming event (an
// id and empty data) and a retry field, then closes the stream, and the
// client waits as asked before it resumes with Last-Event-ID, taking the
// priming event for no message.

package mcphttp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// pollServer is a hand-written Streamable HTTP server.
type pollServer struct {
	session string // the session id it issues ("" for none)

	mu       sync.Mutex
	closedAt time.Time // when it ended the "poll" call's stream
	resumeAt time.Time // when the GET resuming it came
	gets     int       // standalone GETs (no Last-Event-ID)
}

func (p *pollServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.session != "" {
		w.Header().Set(HeaderSessionID, p.session)
	}
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodGet:
		if r.Header.Get("Last-Event-ID") == "" {
			p.mu.Lock()
			p.gets++
			p.mu.Unlock()
			// No standalone stream here: a stateless server says 404, one
			// with sessions 405.
			if p.session == "" {
				w.WriteHeader(http.StatusNotFound)
			} else {
				w.WriteHeader(http.StatusMethodNotAllowed)
			}
			return
		}
		p.mu.Lock()
		p.resumeAt = time.Now()
		p.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		id := strings.TrimPrefix(r.Header.Get("Last-Event-ID"), "prime-")
		fmt.Fprintf(w, "id: answer-%s\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"polled\"}]}}\n\n", id, id)
		return
	}
	m, _, handled := rawServeLifecycle(w, r, "poll")
	switch {
	case handled:
	case !m.IsRequest():
		w.WriteHeader(http.StatusAccepted)
	case strings.Contains(string(m.Params), `"poll"`):
		// The priming event, a retry of 300 ms, and the stream ends.
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: prime-%s\nretry: 300\ndata:\n\n", m.ID)
		w.(http.Flusher).Flush()
		p.mu.Lock()
		p.closedAt = time.Now()
		p.mu.Unlock()
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"content":[{"type":"text","text":"plain"}]}`)))
	}
}

func pollClient(t *testing.T, p *pollServer, logs *testkit.Output) *mcp.Client {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	conn, err := DialStreamable(testkit.Context(t), srv.URL+"/mcp", ClientOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "t", Version: "1"}, Logger: log})
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientTakesA404OnTheStandaloneStreamWithoutASessionForNoStream(t *testing.T) {
	testkit.LeakCheck(t)
	p := &pollServer{} // issues no session
	c := pollClient(t, p, &testkit.Output{})
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		gets := p.gets
		p.mu.Unlock()
		if gets > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client never asked for the standalone stream")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, bounded
	}
	for range 3 {
		if _, err := c.Call(testkit.Context(t), "tools/call", []byte(`{"name":"plain"}`)); err != nil {
			t.Fatalf("a call after the GET's 404: %v (the connection was ended as expired)", err)
		}
	}
}

func TestClientWaitsTheServersRetryAndTakesAPrimingEventForNoMessage(t *testing.T) {
	testkit.LeakCheck(t)
	p := &pollServer{session: "s-1"}
	logs := &testkit.Output{}
	c := pollClient(t, p, logs)
	ctx, cancel := context.WithTimeout(testkit.Context(t), 20*time.Second)
	defer cancel()
	res, err := c.Call(ctx, "tools/call", []byte(`{"name":"poll"}`))
	if err != nil || !strings.Contains(string(res), "polled") {
		t.Fatalf("the polled call: %s %v, want its answer from the resumed stream", res, err)
	}
	p.mu.Lock()
	waited := p.resumeAt.Sub(p.closedAt)
	p.mu.Unlock()
	if waited < 300*time.Millisecond {
		t.Errorf("the client resumed %v after the stream closed; the server asked for 300ms", waited)
	}
	if out := logs.String(); strings.Contains(out, "bad message") || strings.Contains(out, "empty message") {
		t.Errorf("the priming event was taken for a message:\n%s", out)
	}
}

// rawServeLifecycle reads a POST for a hand-written test server and
// answers what every such server answers alike: a body that does not
// parse (400) and initialize. handled says it answered; otherwise the
// message and its raw body are the caller's to answer.
func rawServeLifecycle(w http.ResponseWriter, r *http.Request, name string) (m *jsonrpc.Message, body []byte, handled bool) {
	body, _ = io.ReadAll(r.Body)
	m, err := jsonrpc.Parse(body)
	switch {
	case err != nil:
		w.WriteHeader(http.StatusBadRequest)
		return nil, body, true
	case m.Method == "initialize":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"`+name+`","version":"1"}}`)))
		return m, body, true
	}
	return m, body, false
}
