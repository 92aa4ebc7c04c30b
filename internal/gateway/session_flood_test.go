// session_flood_test.go pins, through the assembled gateway with real
// tokens, that one identity cannot push everyone else out: its sessions
// are capped (429, naming the limit), at the global cap it evicts its own
// first, and opening sessions (initialize, a legacy SSE stream) is rate
// limited like a call — from a bucket of its own, so that calls keep
// their budget.

package gateway_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

func TestOneIdentityFloodingSessionsLeavesAnotherAnswering(t *testing.T) {
	e := gwStart(t, "http: {max_sessions: 8, max_sessions_per_identity: 5}\n")
	viewer, _ := e.token("mallory", "viewer")
	admin, _ := e.token("admin", "admin")
	adminSession := e.initialize(admin)
	// A second identity's sessions fill the table but for the admin's.
	editor, _ := e.token("bob", "editor")
	editorSessions := []string{e.initialize(editor), e.initialize(editor)}

	refused := 0
	for range 60 {
		rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(viewer), body: gwInitializeBody})
		switch rep.status {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("initialize in a flood: %d %s", rep.status, rep.body)
		}
	}
	if refused != 55 {
		t.Errorf("%d of 60 initializes refused, want all but the 5 the per-identity cap allows", refused)
	}
	// Each refusal is a denial for the session cap.
	mtWant(t, mtSeries(t, mtScrape(e, gwBearer(admin)).body), `mcpgate_denials_total{reason="session_cap"}`, 55)
	// The table was full (1 + 2 + 5): the flood's refusals evicted
	// nobody, and the older idle sessions of others still answer.
	for secret, sessions := range map[string][]string{admin: {adminSession}, editor: editorSessions} {
		for _, sid := range sessions {
			rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(secret), session: sid, body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`})
			if rep.status != http.StatusOK {
				t.Errorf("an idle session of another identity after the flood: %d %s", rep.status, rep.body)
			}
		}
	}
}

func TestOpeningSessionsIsRateLimitedLikeCalls(t *testing.T) {
	e := gwStart(t, "rate_limits:\n  roles: {viewer: {rate: 0.001, burst: 3}}\n")
	viewer, _ := e.token("mallory", "viewer")
	for range 3 {
		e.initialize(viewer) // spends one each
	}
	rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(viewer), body: gwInitializeBody})
	m, err := jsonrpc.Parse(rep.body)
	if err != nil || rep.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("a 4th initialize: %d %s (session %q)", rep.status, rep.body, rep.header.Get("Mcp-Session-Id"))
	}
	data, _ := jsonrpc.Lookup(m.Error, "data")
	if code, _ := jsonrpc.Lookup(m.Error, "code"); string(code) != "-32000" || string(must(jsonrpc.Lookup(data, "kind"))) != `"rate_limited"` {
		t.Fatalf("a 4th initialize: %s, want -32000 rate_limited", rep.body)
	}

	// A legacy SSE stream is a session too: refused with 429 and
	// Retry-After.
	req, _ := http.NewRequestWithContext(testkit.Context(t), http.MethodGet, e.base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", gwBearer(viewer))
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("GET /sse past the budget: %d (Retry-After %q), want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	// Opening a session spends nothing of the calls' budget.
	e2 := gwStart(t, "rate_limits:\n  roles: {viewer: {rate: 0.001, burst: 1}}\n")
	v2, _ := e2.token("carol", "viewer")
	c := e2.dial(gwStreamable, gwBearer(v2)) // spends the session budget
	if _, err := gwCall(context.Background(), c, "tools/call", map[string]any{"name": gwToolEcho, "arguments": map[string]any{"text": "x"}}); err != nil {
		t.Fatalf("the first call after initialize: %v (a session spent the call budget)", err)
	}
}

func must(raw []byte, _ error) []byte { return raw }
