// client_stream_first_test.go pins the order a Streamable client keeps
// after initialize: the standalone stream is open before the first call.

package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// sfServer sends its sampling request on the standalone GET stream as soon
// as a call arrives, as the TypeScript SDK's servers do; a request sent
// before that stream is open is lost. Its GET stream takes a while to
// open, so a client that does not wait for it calls too early.
type sfServer struct {
	mu      sync.Mutex
	stream  io.Writer // the open GET stream
	flusher http.Flusher
	answers chan []byte // the client's answers to the server's requests
}

func (s *sfServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(HeaderSessionID, "sf")
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodGet:
		time.Sleep(150 * time.Millisecond) // a slow stream to open (the peer's pace, not a synchronisation)
		// Registered, then answered: once the client sees the headers, a
		// request sent on the stream reaches it.
		s.mu.Lock()
		s.stream, s.flusher = w, w.(http.Flusher)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		s.mu.Unlock()
		<-r.Context().Done()
		return
	}
	m, body, handled := rawServeLifecycle(w, r, "sf")
	switch {
	case handled:
	case m.Kind() == jsonrpc.KindResult || m.Kind() == jsonrpc.KindError:
		s.answers <- body
		w.WriteHeader(http.StatusAccepted)
	case !m.IsRequest():
		w.WriteHeader(http.StatusAccepted)
	default: // tools/call: ask the client on the standalone stream
		s.mu.Lock()
		stream, flusher := s.stream, s.flusher
		if stream != nil {
			fmt.Fprintf(stream, "data: %s\n\n", `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`)
			flusher.Flush()
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if stream == nil {
			_, _ = w.Write(jsonrpc.AppendError(nil, m.ID, jsonrpc.Errorf(-32001, "the request was sent before the stream opened, and lost")))
			return
		}
		select {
		case a := <-s.answers:
			text, _ := json.Marshal(string(a))
			_, _ = w.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"content":[{"type":"text","text":`+string(text)+`}]}`)))
		case <-time.After(10 * time.Second):
			_, _ = w.Write(jsonrpc.AppendError(nil, m.ID, jsonrpc.Errorf(-32001, "no answer from the client")))
		}
	}
}

// The first call after initialize waits until the standalone stream is
// open, so that a server request sent on it at once is not lost.
func TestClientOpensTheStandaloneStreamBeforeTheFirstCall(t *testing.T) {
	testkit.LeakCheck(t)
	s := &sfServer{answers: make(chan []byte, 1)}
	srv := httptest.NewServer(s)
	defer srv.Close()
	defer srv.CloseClientConnections()
	conn, err := DialStreamable(testkit.Context(t), srv.URL+"/mcp", ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "t", Version: "1"}, Capabilities: json.RawMessage(`{"sampling":{}}`),
		OnRequest: func(context.Context, *jsonrpc.Message) (json.RawMessage, error) {
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}`), nil
		}})
	defer c.Close()
	if _, err := c.Initialize(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(testkit.Context(t), "tools/call", json.RawMessage(`{"name":"sample"}`))
	if err != nil || !strings.Contains(string(res), "sampled") {
		t.Fatalf("the first call: %s %v, want the client's sampling answer", res, err)
	}
}
