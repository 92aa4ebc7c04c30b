//go:build unix

// client_test.go runs mcpgate's own client over Command against the test
// binary as a child server: the calls a gateway relays, the server's
// requests coming back while a call is in flight, progress, and many
// calls at once.

package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// startClient starts the child server and an initialized client on it.
func startClient(t *testing.T, copts mcp.ClientOptions) (*mcp.Client, *Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	conn, err := Command(ctx, os.Args[0], nil, CommandOptions{Name: "child", Env: childCommandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	copts.Info = mcp.Implementation{Name: "mcpgate-test", Version: "0"}
	c := mcp.NewClient(conn, copts)
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c, conn
}

func callText(t *testing.T, c *mcp.Client, params string) string {
	t.Helper()
	res, err := c.Call(t.Context(), "tools/call", json.RawMessage(params))
	if err != nil {
		t.Fatalf("tools/call %s: %v", params, err)
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("result %s: %v", res, err)
	}
	return r.Content[0].Text
}

func TestClientOverCommand(t *testing.T) {
	c, _ := startClient(t, mcp.ClientOptions{})
	ctx := t.Context()

	t.Run("tools/list", func(t *testing.T) {
		res, err := c.Call(ctx, "tools/list", nil)
		if err != nil || !strings.Contains(string(res), `"name":"echo"`) {
			t.Fatalf("tools/list: %s, %v", res, err)
		}
	})
	t.Run("tools/call answers content", func(t *testing.T) {
		if got := callText(t, c, `{"name":"echo","arguments":{"text":"hi"}}`); got != "hi" {
			t.Errorf("echo answered %q", got)
		}
	})
	t.Run("tools/call with invalid arguments is -32602 naming the violation", func(t *testing.T) {
		_, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{}}`))
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(string(je.Data), "text") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("resources/read", func(t *testing.T) {
		res, err := c.Call(ctx, "resources/read", json.RawMessage(`{"uri":"test://greeting"}`))
		if err != nil || !strings.Contains(string(res), `"text":"hello"`) {
			t.Fatalf("resources/read: %s, %v", res, err)
		}
	})
	t.Run("prompts/get", func(t *testing.T) {
		res, err := c.Call(ctx, "prompts/get", json.RawMessage(`{"name":"greet","arguments":{"name":"Ada"}}`))
		if err != nil || !strings.Contains(string(res), "Hello, Ada") {
			t.Fatalf("prompts/get: %s, %v", res, err)
		}
	})
	t.Run("ping", func(t *testing.T) {
		if res, err := c.Call(ctx, "ping", nil); err != nil || string(res) != "{}" {
			t.Fatalf("ping: %s, %v", res, err)
		}
	})
	t.Run("pretty-printed raw results arrive compacted with big numbers intact", func(t *testing.T) {
		res, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"pretty"}`))
		if err != nil || !strings.Contains(string(res), `"big":`+bigInteger) {
			t.Fatalf("pretty: %s, %v", res, err)
		}
	})
}

func TestClientAnswersServerRequestWhileCallInFlight(t *testing.T) {
	progress := make(chan *jsonrpc.Message, 16)
	sampled := make(chan string, 1)
	c, _ := startClient(t, mcp.ClientOptions{
		OnNotification: func(m *jsonrpc.Message) {
			if m.Method == "notifications/progress" {
				progress <- m.Clone()
			}
		},
		OnRequest: func(_ context.Context, m *jsonrpc.Message) (json.RawMessage, error) {
			if m.Method != "sampling/createMessage" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "unexpected %s", m.Method)
			}
			sampled <- string(m.Params)
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"42"},"model":"test"}`), nil
		},
	})

	held := make(chan string, 1)
	go func() {
		res, err := c.Call(context.Background(), "tools/call",
			json.RawMessage(`{"name":"wait","arguments":{"key":"k"},"_meta":{"progressToken":"held"}}`))
		if err != nil {
			held <- err.Error()
			return
		}
		held <- string(res)
	}()
	select { // the wait tool is running once it reports progress
	case <-progress:
	case res := <-held:
		t.Fatalf("held call ended early: %s", res)
	}

	if got := callText(t, c, `{"name":"ask","arguments":{"key":"k"}}`); got != "sampled: 42" {
		t.Errorf("ask answered %q", got)
	}
	if params := <-sampled; !strings.Contains(params, `"maxTokens":10`) {
		t.Errorf("sampling params %s", params)
	}
	if res := <-held; !strings.Contains(res, "released k") {
		t.Errorf("held call answered %s", res)
	}
}

func TestClientReceivesProgressBeforeTheAnswer(t *testing.T) {
	var mu sync.Mutex
	var got []string
	c, _ := startClient(t, mcp.ClientOptions{OnNotification: func(m *jsonrpc.Message) {
		if m.Method == "notifications/progress" {
			mu.Lock()
			got = append(got, string(m.Params))
			mu.Unlock()
		}
	}})
	if text := callText(t, c, `{"name":"count","arguments":{"n":5},"_meta":{"progressToken":"p1"}}`); text != "counted 5" {
		t.Fatalf("count answered %q", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 5 {
		t.Fatalf("%d progress notifications, want 5: %v", len(got), got)
	}
	for i, p := range got {
		if !strings.Contains(p, `"progressToken":"p1"`) || !strings.Contains(p, fmt.Sprintf(`"progress":%d`, i+1)) {
			t.Errorf("notification %d: %s", i, p)
		}
	}
}

func TestClientConcurrentCalls(t *testing.T) {
	c, _ := startClient(t, mcp.ClientOptions{})
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			want := fmt.Sprintf("call-%d", i)
			res, err := c.Call(t.Context(), "tools/call", json.RawMessage(`{"name":"echo","arguments":{"text":"`+want+`"}}`))
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			if !strings.Contains(string(res), `"text":"`+want+`"`) {
				t.Errorf("call %d answered %s", i, res)
			}
		})
	}
	wg.Wait()
}
