// wire_test.go pins the proxy kind against a real `mcpgate proxy` server
// (package proxy, in process, on a real socket) in front of the fixture:
// lists and calls relayed with the result's bytes and the error's code and
// data as the MCP server sent them, list_changed reaching the backend and
// resyncing it, a refused begin and refused secrets reported without a
// secret's value, and a proxy that dies taking the backend down.

package backends_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/proxytest"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// A result with what a re-encoding relay would lose: an unknown field, an
// integer beyond a float64, _meta, and keys out of order.
const wtFidelityResult = `{"content":[{"type":"text","text":"exact"}],"zUnknown":{"n":123456789012345678901234567890},"isError":false,"_meta":{"k":[1,2]}}`

// A custom error code with data.
const wtCustomError = `{"code":-32042,"message":"custom failure","data":{"retryAfter":123456789012345678901234567890}}`

// wtServer is the fixture plus two tools whose answers must cross as sent.
func wtServer(t *testing.T) *mcp.Server {
	t.Helper()
	s := fixture.New(fixture.Options{})
	err := s.AddTools(
		&mcp.Tool{Name: "fidelity", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(wtFidelityResult), nil
		}},
		&mcp.Tool{Name: "custom_error", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return nil, jsonrpc.RawError(json.RawMessage(wtCustomError))
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wtServeMCP serves s over Streamable HTTP and returns its base URL; mux
// may add routes (a contract program's /register and /secrets).
func wtServeMCP(t *testing.T, s *mcp.Server, mux *http.ServeMux) string {
	t.Helper()
	if mux == nil {
		mux = http.NewServeMux()
	}
	h := mcphttp.NewHandler(s, mcphttp.Options{})
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	t.Cleanup(func() { ts.Close(); h.Close() })
	return ts.URL
}

// wtProxy serves a proxy in front of the upstream cfg names and returns
// its ws:// URL and a kill that ends it as a crash would
// (proxytest.Serve).
func wtProxy(t *testing.T, cfg proxy.UpstreamConfig, infoPath string) (string, func()) {
	t.Helper()
	up, err := proxy.NewUpstream(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() }) // after the kill
	if infoPath == "" {
		infoPath = filepath.Join(t.TempDir(), "no-DIVERGE.md")
	}
	return proxytest.Serve(t, up, infoPath)
}

// wtLog collects a backend's log lines.
type wtLog struct{ testkit.Output }

func (l *wtLog) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// wtDirect calls method on the MCP server at url directly, as the proxy's
// upstream would, and returns the raw result.
func wtDirect(t *testing.T, url, method, params string) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := mcphttp.DialStreamable(ctx, url, mcphttp.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "direct", Version: "1"}})
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, method, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wtUpProxyBackend runs a proxy backend named p on f, dialling the proxy
// at url, and waits until it is up.
func wtUpProxyBackend(t *testing.T, f *front, url string) *backends.Backend {
	t.Helper()
	b := backends.New(backends.Spec{Name: "p", Kind: upstream.KindProxy, URL: url}, f.Server, nil, fast)
	run(t, b)
	waitState(t, b, "up", isUp)
	return b
}

// The proxy kind relays the lists and calls the wire carries: the entries
// reach the front, a call's result is the bytes the MCP server sent, and
// an error keeps its custom code and its data.
func TestProxyBackendRelaysByteForByte(t *testing.T) {
	base := wtServeMCP(t, wtServer(t), nil)
	url, _ := wtProxy(t, proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: base + "/mcp"}, "")
	f := newFront(t)
	wtUpProxyBackend(t, f, url)

	if !f.has(t, "p__test_simple_text") || !f.has(t, "p__fidelity") {
		t.Fatalf("front tools = %v", f.tools(t))
	}
	direct := wtDirect(t, base+"/mcp", "tools/call", `{"name":"fidelity","arguments":{}}`)
	m := f.call(t, "tools/call", `{"name":"p__fidelity","arguments":{}}`)
	if !bytes.Equal(m.Result, direct) || string(m.Result) != wtFidelityResult {
		t.Errorf("result through the proxy backend:\n%s\ndirect:\n%s", m.Result, direct)
	}
	m = f.call(t, "tools/call", `{"name":"p__custom_error","arguments":{}}`)
	if string(m.Error) != wtCustomError {
		t.Errorf("error through the proxy backend = %s, want %s", m.Error, wtCustomError)
	}
	m = f.call(t, "resources/list", "")
	if !strings.Contains(string(m.Result), fixture.WatchedResource) {
		t.Errorf("resources/list = %s %s, want the fixture's resources", m.Result, m.Error)
	}
	m = f.call(t, "resources/read", `{"uri":"`+fixture.WatchedResource+`"}`)
	if m.Error != nil || !strings.Contains(string(m.Result), "contents") {
		t.Errorf("resources/read = %s %s", m.Result, m.Error)
	}
}

// A list_changed from the MCP server crosses the proxy's notification
// stream and makes the backend sync its catalogue again.
func TestProxyBackendResyncsOnListChanged(t *testing.T) {
	srv := wtServer(t)
	base := wtServeMCP(t, srv, nil)
	url, _ := wtProxy(t, proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: base + "/mcp"}, "")
	f := newFront(t)
	wtUpProxyBackend(t, f, url)
	if f.has(t, "p__late") {
		t.Fatal("p__late before it was added")
	}
	// The proxy's upstream session must exist to hear the notification:
	// the backend's sync opened it.
	if err := srv.AddTools(&mcp.Tool{Name: "late", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[]}`), nil
	}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !f.has(t, "p__late") {
		if time.Now().After(deadline) {
			t.Fatalf("the new tool never reached the front: %v", f.tools(t))
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded
	}
}

// wtProgram is a container-contract program: /register and /secrets
// answer with the statuses the test chose, a refusal quoting what it was
// sent, and /mcp is the fixture.
type wtProgram struct {
	registerStatus, secretsStatus int
	mu                            sync.Mutex
	secrets                       []string // bodies of /secrets
}

func (p *wtProgram) serve(t *testing.T) string {
	mux := http.NewServeMux()
	answer := func(status int, record bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if record {
				p.mu.Lock()
				p.secrets = append(p.secrets, string(body))
				p.mu.Unlock()
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			if status >= 300 {
				_ = json.NewEncoder(w).Encode(map[string]string{"kind": "refused", "got": string(body)})
				return
			}
			_, _ = io.WriteString(w, `{}`)
		}
	}
	mux.Handle("/register", answer(p.registerStatus, false))
	mux.Handle("/secrets", answer(p.secretsStatus, true))
	return wtServeMCP(t, wtServer(t), mux)
}

const wtSecret = "s3cret-value-never-shown"

// A refused begin, or refused secrets, leave the backend down with the
// program's refusal as its error — and no secret value in that error or
// in any log line, though the program quoted it.
func TestProxyBackendRefusalsHideSecrets(t *testing.T) {
	for _, c := range []struct {
		name                string
		register, secrets   int
		want                string
		wantSecretsReceived bool
	}{
		{"begin refused", http.StatusForbidden, http.StatusOK, "tools begin refused", false},
		{"secrets refused", http.StatusOK, http.StatusForbidden, "secrets refused", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &wtProgram{registerStatus: c.register, secretsStatus: c.secrets}
			url, _ := wtProxy(t, proxy.UpstreamConfig{Kind: upstream.KindContract, URL: p.serve(t)}, "")
			logs := &wtLog{}
			opts := fast
			opts.Logger = logs.logger()
			f := newFront(t)
			// The begin's arguments carry the secret too: a program
			// refusing them may quote them.
			spec := backends.Spec{Name: "p", Kind: upstream.KindProxy, URL: url,
				Arguments: []byte(`{"token":"` + wtSecret + `"}`), Secrets: map[string]string{"TOKEN": wtSecret}}
			b := backends.New(spec, f.Server, nil, opts)
			run(t, b)
			s := waitState(t, b, "down", isDown)
			if !strings.Contains(s.LastError, c.want) || !strings.Contains(s.LastError, "refused") {
				t.Errorf("LastError = %q, want %q and the program's refusal", s.LastError, c.want)
			}
			if strings.Contains(s.LastError, wtSecret) || strings.Contains(logs.String(), wtSecret) {
				t.Errorf("a secret value was reported:\nLastError %s\nlog:\n%s", s.LastError, logs)
			}
			p.mu.Lock()
			got := strings.Join(p.secrets, "\n")
			p.mu.Unlock()
			if c.wantSecretsReceived != strings.Contains(got, wtSecret) {
				t.Errorf("the program received secrets %q (want them: %v)", got, c.wantSecretsReceived)
			}
		})
	}
}

// Fed secrets: the program gets every value, and the backend comes up.
func TestProxyBackendFeedsSecrets(t *testing.T) {
	p := &wtProgram{registerStatus: http.StatusOK, secretsStatus: http.StatusOK}
	url, _ := wtProxy(t, proxy.UpstreamConfig{Kind: upstream.KindContract, URL: p.serve(t)}, "")
	f := newFront(t)
	b := backends.New(backends.Spec{Name: "p", Kind: upstream.KindProxy, URL: url,
		Secrets: map[string]string{"TOKEN": wtSecret}}, f.Server, nil, fast)
	run(t, b)
	waitState(t, b, "up", isUp)
	p.mu.Lock()
	got := strings.Join(p.secrets, "\n")
	p.mu.Unlock()
	if got != `{"TOKEN":"`+wtSecret+`"}` {
		t.Errorf("the program got secrets %q", got)
	}
	if text := f.callText(t, "p__test_simple_text"); text != "This is a simple text response for testing." {
		t.Errorf("call after Fed = %q", text)
	}
}

// A proxy that dies takes the backend down (its entries leave the front),
// and a restart re-dials, which a dead proxy cannot answer.
func TestProxyBackendGoesDownWhenTheProxyDies(t *testing.T) {
	base := wtServeMCP(t, wtServer(t), nil)
	url, kill := wtProxy(t, proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: base + "/mcp"}, "")
	f := newFront(t)
	b := wtUpProxyBackend(t, f, url)
	kill()
	s := waitState(t, b, "down", isDown)
	if f.has(t, "p__test_simple_text") {
		t.Errorf("the dead proxy's tools are still in the front")
	}
	t.Logf("down: %s", s.LastError)
}

// One framed connection at a time: a second backend dialling a proxy
// whose connection is open is refused with 409, and says so.
func TestProxyBackendRedialIsRefusedWhileAnotherIsOpen(t *testing.T) {
	base := wtServeMCP(t, wtServer(t), nil)
	url, _ := wtProxy(t, proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: base + "/mcp"}, "")
	f := newFront(t)
	wtUpProxyBackend(t, f, url)
	second := backends.New(backends.Spec{Name: "q", Kind: upstream.KindProxy, URL: url}, f.Server, nil, fast)
	run(t, second)
	s := waitState(t, second, "down", isDown)
	if !strings.Contains(s.LastError, "409") {
		t.Errorf("LastError = %q, want the proxy's 409", s.LastError)
	}
}

// A gateway that restarts finds its backend again: once the first
// gateway's connection ended (here after `mcpgate call` took it before
// any gateway, then a gateway that stopped), the next one re-attaches to
// the begun container and is up, its calls answered.
func TestProxyBackendReattachesAfterAnotherConnectionEnded(t *testing.T) {
	base := wtServeMCP(t, wtServer(t), nil)
	url, _ := wtProxy(t, proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: base + "/mcp"}, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// As mcpgate call does: begin, ask, go.
	s, err := wiremcp.Begin(ctx, url, wiremcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exchange(ctx, "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()

	f := newFront(t)
	first := backends.New(backends.Spec{Name: "p", Kind: upstream.KindProxy, URL: url}, f.Server, nil, fast)
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = first.Run(rctx) }()
	waitState(t, first, "up", isUp)
	stop() // the gateway stops
	<-done

	f2 := newFront(t)
	wtUpProxyBackend(t, f2, url)
	if text := f2.callText(t, "p__test_simple_text"); text != "This is a simple text response for testing." {
		t.Errorf("call after the re-attach = %q", text)
	}
}
