// stream_counts_test.go pins what the transports tell an operator about
// themselves: the event streams open now, by era, from the moment one
// starts until its handler lets it go; and every session refused at a cap.

package mcphttp

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestStreamsAreCountedByEraWhileTheyAreOpen(t *testing.T) {
	testkit.LeakCheck(t)
	e := newStEnv(t, fixture.New(fixture.Options{}), Options{Sessionless: true})
	streams := func() [2]int { a, b := e.h.Streams(); return [2]int{a, b} }
	if got := streams(); got != [2]int{} {
		t.Fatalf("Streams before any = %v", got)
	}
	sid := e.initialize("alice", mcp.Version20251125)
	get, _ := e.openGet(sid, "X-Test-Identity", "alice")
	if got := streams(); got != [2]int{1, 0} {
		t.Fatalf("Streams with a standalone GET open = %v, want [1 0]", got)
	}
	body := `{"jsonrpc":"2.0","id":"sub-1","method":"subscriptions/listen","params":{` + slMeta +
		`,"notifications":{"toolsListChanged":true}}}`
	listen := e.open(http.MethodPost, stHeaders("", HeaderProtocolVersion, mcp.Version20260728, HeaderMethod, "subscriptions/listen"), body)
	if listen.StatusCode != http.StatusOK {
		t.Fatalf("listen: %d", listen.StatusCode)
	}
	if got := streams(); got != [2]int{1, 1} {
		t.Fatalf("Streams with a listen open too = %v, want [1 1]", got)
	}
	// A POST answered as plain JSON is no stream.
	if r := e.post(sid, stPing, "X-Test-Identity", "alice"); r.status != http.StatusOK {
		t.Fatalf("ping: %d", r.status)
	}
	if got := streams(); got != [2]int{1, 1} {
		t.Fatalf("Streams after a plain JSON answer = %v, want [1 1]", got)
	}
	_ = get.Body.Close()
	testkit.WaitFor(t, "the GET stream to be let go", func() bool { return streams() == [2]int{0, 1} })
	_ = listen.Body.Close()
	testkit.WaitFor(t, "the listen stream to be let go", func() bool { return streams() == [2]int{} })
}

func TestSessionsRefusedAtACapAreTold(t *testing.T) {
	testkit.LeakCheck(t)
	var told atomic.Int32
	opts := Options{MaxSessionsPerIdentity: 1, SessionRefused: func(r *http.Request) {
		if r.Header.Get("X-Test-Identity") != "mallory" {
			t.Errorf("told of a refusal of %q", r.Header.Get("X-Test-Identity"))
		}
		told.Add(1)
	}}
	s, _ := stNewServer(t)
	e := newStEnv(t, s, opts)
	e.initialize("mallory", mcp.Version20251125)
	if r := e.post("", stInitBody(mcp.Version20251125), "X-Test-Identity", "mallory"); r.status != http.StatusTooManyRequests {
		t.Fatalf("a 2nd session = %d", r.status)
	}
	if told.Load() != 1 {
		t.Fatalf("Streamable HTTP: told of %d refusals, want 1", told.Load())
	}

	f := newLegacyFixture(t, opts)
	openLegacyStream(t, f, "mallory")
	status := refusedLegacyStream(t, f, "mallory")
	if status != http.StatusTooManyRequests || told.Load() != 2 {
		t.Fatalf("legacy: a 2nd stream = %d, told of %d refusals, want 429 and 2", status, told.Load())
	}
}
