// relay_test.go runs every MCP exchange through the proxy, over both forms
// of the wire, against real upstreams: the project's conformance fixture
// over Streamable HTTP, and the reference server
// (@modelcontextprotocol/server-everything) over stdio and over
// Streamable HTTP.

package proxy

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/upstream"
)

// relayCase is one upstream and what its exchanges look like.
type relayCase struct {
	name     string
	upstream func(t *testing.T, logs *logWatch) *Upstream
	// tools/list and resources/list answers contain these.
	tool, resource string
	// call is a tools/call and a text its result contains.
	call, callWant string
	// read is a resources/read and a text its result contains.
	read, readWant string
	// notify is a tools/call that makes the server send notifications of
	// method notifyMethod while it runs.
	notify, notifyMethod string
}

var fixtureCase = relayCase{
	name: "fixture over Streamable HTTP",
	upstream: func(t *testing.T, logs *logWatch) *Upstream {
		return fixtureUpstream(t, logs.logger())
	},
	tool:         `"test_simple_text"`,
	resource:     `"test://static-text"`,
	call:         `{"name":"test_simple_text","arguments":{}}`,
	callWant:     "This is a simple text response for testing.",
	read:         `{"uri":"test://static-text"}`,
	readWant:     "This is the content of the static text resource.",
	notify:       `{"name":"test_tool_with_logging","arguments":{}}`,
	notifyMethod: "notifications/message",
}

// everythingCase is server-everything behind upstream: its echo tool, a
// dynamic text resource, and progress notifications from its long-running
// operation (they ride the request's own stream, so no subscription to a
// resource is needed — the wire has no resources/subscribe).
func everythingCase(name string, upstream func(t *testing.T, logs *logWatch) *Upstream) relayCase {
	return relayCase{
		name:         name,
		upstream:     upstream,
		tool:         `"echo"`,
		resource:     `"demo://resource/static/document/`,
		call:         `{"name":"echo","arguments":{"message":"through the wire"}}`,
		callWant:     "Echo: through the wire",
		read:         `{"uri":"demo://resource/dynamic/text/1"}`,
		readWant:     `"demo://resource/dynamic/text/1"`,
		notify:       `{"name":"trigger-long-running-operation","arguments":{"duration":0.2,"steps":2},"_meta":{"progressToken":"wire-test"}}`,
		notifyMethod: "notifications/progress",
	}
}

var relayCases = []relayCase{
	fixtureCase,
	everythingCase("server-everything over stdio", func(t *testing.T, logs *logWatch) *Upstream {
		p := peers.Require(t)
		return newUpstream(t, UpstreamConfig{Kind: upstream.KindStdio, Command: []string{p.Node22, p.ServerEverything, "stdio"}, Logger: logs.logger()})
	}),
	everythingCase("server-everything over Streamable HTTP", func(t *testing.T, logs *logWatch) *Upstream {
		return newUpstream(t, UpstreamConfig{Kind: upstream.KindHTTP, URL: startEverythingHTTP(t), Logger: logs.logger()})
	}),
}

func TestEveryExchangeBehindTheProxy(t *testing.T) {
	for _, rc := range relayCases {
		t.Run(rc.name, func(t *testing.T) {
			ctx := testCtx(t)
			logs := &logWatch{}
			base := serveProxy(t, Options{Upstream: rc.upstream(t, logs), Logger: logs.logger()})
			streams := 0
			for _, f := range []form{perPath{base}, beginFramed(t, ctx, base)} {
				t.Run(f.name(), func(t *testing.T) {
					exchangeAll(t, ctx, f, rc)

					// Two streams open, then a tool that notifies: both hear it.
					subs := []subscription{f.subscribe(t, ctx), f.subscribe(t, ctx)}
					streams += len(subs)
					logs.waitFor(t, ctx, logStreamOpen, streams)
					want(t, "notifying tool", result(t, f.exchange(t, ctx, "tools/call", rc.notify)), "")
					for i, sub := range subs {
						msg := notificationOf(t, ctx, sub, rc.notifyMethod)
						if rc.notifyMethod == "notifications/progress" {
							want(t, "progress notification", msg, `"progressToken":"wire-test"`)
						}
						t.Logf("stream %d heard %s", i, msg)
					}
				})
			}
		})
	}
}

// exchangeAll makes the four unary exchanges and checks their answers.
func exchangeAll(t *testing.T, ctx context.Context, f form, rc relayCase) {
	t.Helper()
	want(t, "tools/list", result(t, f.exchange(t, ctx, "tools/list", "null")), rc.tool)
	want(t, "tools/list with params", result(t, f.exchange(t, ctx, "tools/list", `{"_meta":{"x":1}}`)), rc.tool)
	want(t, "resources/list", result(t, f.exchange(t, ctx, "resources/list", "null")), rc.resource)
	want(t, "tools/call", result(t, f.exchange(t, ctx, "tools/call", rc.call)), rc.callWant)
	want(t, "resources/read", result(t, f.exchange(t, ctx, "resources/read", rc.read)), rc.readWant)
}

func want(t *testing.T, what string, got []byte, part string) {
	t.Helper()
	if !strings.Contains(string(got), part) {
		t.Errorf("%s = %.400s; want it to contain %s", what, got, part)
	}
}

// startEverythingHTTP starts server-everything's Streamable HTTP transport
// on a free port and returns its /mcp URL once it listens. It binds every
// interface (it has no host option); this machine has no other network.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	return "http://127.0.0.1:" + startEverythingPort(t) + "/mcp"
}

// startEverythingPort starts server-everything over Streamable HTTP and
// returns its port, once it answers there as itself. It listens on every
// interface: a test server of another package may hold the port it was
// given on 127.0.0.1 meanwhile, and would answer in its place, so the
// answer is checked and another port tried.
func startEverythingPort(t *testing.T) string {
	t.Helper()
	p := peers.Require(t)
	for range 5 {
		port := freePort(t)
		cmd := exec.Command(p.Node22, p.ServerEverything, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+port)
		listening := &watchFor{phrase: "listening on port", seen: make(chan struct{})}
		cmd.Stderr = listening
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			_ = cmd.Process.Kill()
			<-exited
		}
		select { // it says so once it listens: no need to poll its port
		case <-listening.seen:
		case err := <-exited:
			t.Logf("server-everything exited before listening on %s (%v); another port", port, err)
			continue
		case <-testCtx(t).Done():
			stop()
			t.Fatalf("server-everything never said it listens:\n%s", stderrOf(listening))
		}
		if everythingAnswersAt(t, port) {
			t.Cleanup(stop)
			return port
		}
		stop()
		t.Logf("another server answers on %s, not server-everything; another port", port)
	}
	t.Fatal("server-everything found no port of its own in 5 tries")
	return ""
}

// everythingAnswersAt reports whether initialize at port is answered by
// server-everything.
func everythingAnswersAt(t *testing.T, port string) bool {
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, "http://127.0.0.1:"+port+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return strings.Contains(string(b), `"mcp-servers/everything"`)
}

func stderrOf(w *watchFor) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.text.String()
}
