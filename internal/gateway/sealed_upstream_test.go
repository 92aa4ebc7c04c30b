// sealed_upstream_test.go pins how a per-client HTTP backend's upstream
// session follows its front session between replicas (backends/resume.go):
// two gateways with one session key, one upstream server; a session opened
// on one replica reaches the same upstream session from the other, with no
// second initialize upstream; a replica that lets the session go (shut
// down) leaves the upstream session open for the other; the client's
// DELETE ends it upstream too.

package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// upstreamSessionServer is an HTTP MCP server whose tool names the
// session it runs in, recording the sessions initialized and deleted.
type upstreamSessionServer struct {
	url string
	h   *mcphttp.Handler

	mu      sync.Mutex
	deleted map[string]bool // by session id
}

func startUpstreamSessionServer(t *testing.T) *upstreamSessionServer {
	t.Helper()
	u := &upstreamSessionServer{deleted: map[string]bool{}}
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "upstream", Version: "0"}})
	if err := s.AddTools(&mcp.Tool{Name: "upstream_session", Handler: func(_ context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(r.Session.ID())}})
	}}); err != nil {
		t.Fatal(err)
	}
	u.h = mcphttp.NewHandler(s, mcphttp.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			u.mu.Lock()
			u.deleted[r.Header.Get(mcphttp.HeaderSessionID)] = true
			u.mu.Unlock()
		}
		u.h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(u.h.Close)
	u.url = srv.URL + "/mcp"
	return u
}

// upstreamSessionOf calls the upstream tool through a gateway in session
// sid and returns the upstream session's id it ran in.
func upstreamSessionOf(t *testing.T, base, sid string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(gwToolCallBody(5, "upstream_session")))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(mcphttp.HeaderSessionID, sid)
	req.Header.Set(mcphttp.HeaderProtocolVersion, mcp.Version20251125)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	_, _ = io.Copy(&body, resp.Body)
	raw := body.String()
	if i := strings.Index(raw, "data: {"); i >= 0 {
		raw = strings.SplitN(raw[i+len("data: "):], "\n", 2)[0]
	}
	var m struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(raw), &m) != nil || len(m.Result.Content) == 0 {
		t.Fatalf("tools/call = %d: %s", resp.StatusCode, body.String())
	}
	return m.Result.Content[0].Text
}

func TestPerClientHTTPUpstreamSessionFollowsItsSessionToAnotherReplica(t *testing.T) {
	testkit.LeakCheck(t)
	up := startUpstreamSessionServer(t)
	key := filepath.Join(t.TempDir(), "session.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("7e", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := "sessions: {key_file: " + key + "}\nbackends:\n  - {name: up, kind: http, url: \"" + up.url + "\", prefix: \"-\", session: per-client}\n"
	baseA, gwA := bkGateway(t, cfg)
	baseB, _ := bkGateway(t, cfg)
	bkWaitReady(t, baseA, http.StatusOK)
	bkWaitReady(t, baseB, http.StatusOK)
	before := up.h.Sessions() // each replica's own connection

	ea := &gwEnv{t: t, base: baseA, client: http.DefaultClient}
	sid := ea.initialize("")
	if !strings.HasPrefix(sid, "m1.") {
		t.Fatalf("session id %q is not sealed", sid)
	}
	onA := upstreamSessionOf(t, baseA, sid)
	onB := upstreamSessionOf(t, baseB, sid)
	if onA != onB {
		t.Fatalf("the session reached upstream session %s through a and %s through b", onA, onB)
	}
	if got := up.h.Sessions() - before; got != 1 {
		t.Errorf("%d upstream sessions for one front session over two replicas, want 1", got)
	}
	// a lets the session go (it shuts down): the upstream session stays.
	if err := gwA.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	up.mu.Lock()
	if up.deleted[onA] { // its own connection's session it deletes, as it should
		t.Error("a replica shutting down deleted the front session's upstream session")
	}
	up.mu.Unlock()
	if again := upstreamSessionOf(t, baseB, sid); again != onA {
		t.Errorf("after a shut down, b reached upstream session %s, want %s", again, onA)
	}
	// The client's DELETE ends it upstream.
	eb := &gwEnv{t: t, base: baseB, client: http.DefaultClient}
	if rep := eb.do(gwRequest{method: http.MethodDelete, path: "/mcp", session: sid}); rep.status != http.StatusOK {
		t.Fatalf("DELETE = %d", rep.status)
	}
	testkit.WaitFor(t, "the upstream session deleted", func() bool {
		up.mu.Lock()
		defer up.mu.Unlock()
		return up.deleted[onA] // an upstream without a key: its session id is the session's
	})
}
