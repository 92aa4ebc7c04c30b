// long_answer_test.go pins a long result's answer: written from where the
// handler's result lies (jsonrpc.Parts), it still arrives whole, with
// its length said, whichever way the client asked for it.

package mcphttp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestALongResultArrivesWholeHoweverItIsAnswered(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 100<<10/16)
	args, _ := json.Marshal(map[string]string{"text": long})
	for _, tc := range []struct {
		name, version, accept string
		stream                bool
	}{
		{"a plain JSON body", mcp.Version20250618, "application/json, text/event-stream", false},
		{"the POST's event stream", mcp.Version20250618, "text/event-stream, application/json", true},
		{"the POST's resumable event stream (2025-11-25)", mcp.Version20251125, "text/event-stream, application/json", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := stNewServer(t)
			e := newStEnv(t, s, Options{})
			sid := e.initialize("alice", tc.version)
			r := e.do(http.MethodPost, stHeaders(sid, "X-Test-Identity", "alice", "Accept", tc.accept, HeaderProtocolVersion, tc.version), stCallBody(2, "echo", string(args)))
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %.200s", r.status, r.body)
			}
			data := r.body
			if tc.stream {
				evs := stEvents(t, r.body)
				if len(evs) == 0 {
					t.Fatalf("no event in %.200s", r.body)
				}
				data = evs[len(evs)-1].Data
			} else if got := r.header.Get("Content-Length"); got != strconv.Itoa(len(r.body)) {
				t.Errorf("Content-Length %q for a body of %d bytes", got, len(r.body))
			}
			if got := stText(t, stMessage(t, data)); got != "echo: "+long {
				t.Errorf("the text came back as %d bytes, want %d", len(got), len("echo: "+long))
			}
		})
	}
}

func TestALongRequestArrivesWholeHoweverItIsSent(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 100<<10/16)
	args, _ := json.Marshal(map[string]any{"name": "echo", "arguments": map[string]string{"text": long}})
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{})
	for _, tc := range []struct {
		name string
		opts ClientOptions
	}{
		{"in its parts, by internal/h1 (the default client)", ClientOptions{}},
		{"as one body, by net/http", ClientOptions{HTTPClient: e.srv.Client()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t)
			conn, err := DialStreamable(ctx, e.url, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "long", Version: "1"}})
			defer c.Close()
			if _, err := c.Initialize(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := c.Call(ctx, "tools/call", args)
			if err != nil {
				t.Fatal(err)
			}
			if got := stText(t, &jsonrpc.Message{ID: jsonrpc.ID("1"), Result: res}); got != "echo: "+long {
				t.Errorf("the text came back as %d bytes, want %d", len(got), len("echo: "+long))
			}
		})
	}
}
