// session_caps_test.go pins the caps that keep one identity from pushing
// everyone else out: a per-identity session cap on both transports, refused
// with 429 and a message that says what to do; and, at the global cap,
// eviction that takes the asking identity's own least recently used
// session before anyone else's.

package mcphttp

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestStreamableSessionsPerIdentityAreCapped(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{MaxSessionsPerIdentity: 3})
	var mallory []string
	for range 3 {
		mallory = append(mallory, e.initialize("mallory", mcp.Version20251125))
	}
	r := e.post("", stInitBody(mcp.Version20251125), "X-Test-Identity", "mallory")
	if r.status != http.StatusTooManyRequests || r.header.Get(HeaderSessionID) != "" {
		t.Fatalf("a 4th session of one identity = %d (session %q): %s", r.status, r.header.Get(HeaderSessionID), r.body)
	}
	m := stMessage(t, r.body)
	data, _ := jsonrpc.Lookup(m.Error, "data")
	if kind, _ := jsonrpc.LookupString(data, "kind"); kind != "session_limit" || string(m.ID) != "0" {
		t.Fatalf("refusal %s: want data.kind session_limit and the initialize's id", r.body)
	}
	// Another identity is not touched, and every one of mallory's
	// sessions still answers.
	alice := e.initialize("alice", mcp.Version20251125)
	for _, sid := range append(mallory, alice) {
		who := "mallory"
		if sid == alice {
			who = "alice"
		}
		if r := e.post(sid, stPing, "X-Test-Identity", who); r.status != http.StatusOK {
			t.Errorf("session of %s answered %d", who, r.status)
		}
	}
	// Ending one gives its place back.
	e.do(http.MethodDelete, stHeaders(mallory[0], "X-Test-Identity", "mallory"), "")
	e.initialize("mallory", mcp.Version20251125)
}

func TestStreamableEvictionAtTheCapTakesTheAskersSessionFirst(t *testing.T) {
	testkit.LeakCheck(t)
	s, _ := stNewServer(t)
	e := newStEnv(t, s, Options{MaxSessions: 4, MaxSessionsPerIdentity: 100})
	admin := e.initialize("admin", mcp.Version20251125) // the oldest, and idle
	var flood []string
	for range 20 {
		flood = append(flood, e.initialize("viewer", mcp.Version20251125))
	}
	if r := e.post(admin, stPing, "X-Test-Identity", "admin"); r.status != http.StatusOK {
		t.Fatalf("the admin's idle session answered %d after a viewer's flood, want 200", r.status)
	}
	if r := e.post(flood[0], stPing, "X-Test-Identity", "viewer"); r.status != http.StatusNotFound {
		t.Errorf("the flood's oldest session answered %d, want 404 (evicted)", r.status)
	}
	if r := e.post(flood[len(flood)-1], stPing, "X-Test-Identity", "viewer"); r.status != http.StatusOK {
		t.Errorf("the flood's newest session answered %d, want 200", r.status)
	}
	if n := e.h.Sessions(); n != 4 {
		t.Errorf("Sessions = %d, want the cap", n)
	}
	// Someone else asking at the cap still evicts the least recently used
	// of all when they hold nothing.
	e.initialize("editor", mcp.Version20251125)
	if r := e.post(admin, stPing, "X-Test-Identity", "admin"); r.status != http.StatusOK {
		t.Errorf("admin's session answered %d: it was used more recently than the flood's", r.status)
	}
}

func TestLegacySessionsPerIdentityAreCapped(t *testing.T) {
	testkit.LeakCheck(t)
	f := newLegacyFixture(t, Options{MaxSessionsPerIdentity: 2})
	first := openLegacyStream(t, f, "mallory")
	openLegacyStream(t, f, "mallory")

	status := refusedLegacyStream(t, f, "mallory")
	if status != http.StatusTooManyRequests {
		t.Fatalf("a 3rd stream of one identity = %d, want 429", status)
	}
	openLegacyStream(t, f, "alice")

	// Hanging up one gives its place back.
	first.hangUp()
	<-f.ended
	openLegacyStream(t, f, "mallory")
}

// refusedLegacyStream asks for one more legacy stream as identity, which
// is expected to be refused, and returns the status it was answered.
func refusedLegacyStream(t *testing.T, f *legacyFixture, identity string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url("/sse"), nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Test-Identity", identity)
	resp, err := f.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
