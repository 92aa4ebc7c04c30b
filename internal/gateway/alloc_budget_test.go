package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// relayBudgets are the allocations one relayed tools/call may make in
// this process: the client, the gateway (token, gate, rate limit) and,
// for the http backend, the backend MCP server in process too. The stdio
// backend is a process of its own, so its row is the client and the
// gateway alone. The audit log is off: its writer has its own budget
// (package audit) and its store its own benchmarks. Lower a budget when a
// change makes a row cheaper; raise one only with the reason in the
// commit.
var relayBudgets = []struct {
	backend string // http or stdio
	era     mcp.Era
	budget  float64
}{
	// Measured 137, 142, 74 and 79 on 2026-12-07 (go1.26), with 2 to
	// spare for a runtime's own drift. (293, 326, 156, 189 at the start
	// of issue 27; 216, 223, 113, 120 before internal/h1.)
	{"http", mcp.EraSession, 139},
	{"http", mcp.EraSessionless, 144},
	{"stdio", mcp.EraSession, 76},
	{"stdio", mcp.EraSessionless, 81},
}

// TestARelayedCallStaysWithinItsAllocationBudget fails when a change adds
// allocations to the relayed call beyond the budget written above.
// Allocation counts are deterministic enough for a test; no test here
// asserts a time.
func TestARelayedCallStaysWithinItsAllocationBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpgate for the stdio backend")
	}
	if testkit.Race {
		t.Skip("the race detector allocates on its own account; the plain run checks the budgets")
	}
	for _, b := range relayBudgets {
		t.Run(b.backend+"/"+string(b.era), func(t *testing.T) {
			call := relayedCall(t, b.backend, b.era)
			got := testing.AllocsPerRun(500, call)
			t.Logf("%.0f allocations per relayed call (budget %.0f)", got, b.budget)
			if got > b.budget {
				t.Errorf("a relayed call (%s backend, %s era) makes %.0f allocations, over its budget of %.0f", b.backend, b.era, got, b.budget)
			}
		})
	}
}

// relayedCall starts a gateway in front of the fixture as a backend of
// kind, connects a client of era to it, and returns one tools/call.
func relayedCall(t testing.TB, kind string, era mcp.Era) func() {
	var backend string
	switch kind {
	case "http":
		backend = httpBackend(t, fixture.New(fixture.Options{}))
	case "stdio":
		backend = "{name: fx, kind: stdio, command: [" + strconv.Quote(testkit.Mcpgate(t)) + ", fixture, --stdio], prefix: \"-\"}"
	}
	c := frontClient(t, backend, era, "test_simple_text")
	ctx := testkit.Context(t)
	params := json.RawMessage(`{"name":"test_simple_text","arguments":{}}`)
	return func() {
		if _, err := c.Call(ctx, "tools/call", params); err != nil {
			t.Fatal(err)
		}
	}
}

// httpBackend serves s over Streamable HTTP (both eras) and returns it as
// a backend entry of the configuration, named fx, without a prefix.
func httpBackend(tb testing.TB, s *mcp.Server) string {
	h := mcphttp.NewHandler(s, mcphttp.Options{Sessionless: true})
	tb.Cleanup(h.Close)
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	return "{name: fx, kind: http, url: " + strconv.Quote(ts.URL) + ", prefix: \"-\"}"
}

// frontClient starts a gateway (token auth, no audit, no effective rate
// limit) in front of backend, and returns a client of era connected to it
// once the backend's tool named listed is in the catalogue.
func frontClient(tb testing.TB, backend string, era mcp.Era, listed string) *mcp.Client {
	ctx := testkit.Context(tb)
	cfg, err := config.Parse([]byte("listen: 127.0.0.1:0\naudit: {disabled: true}\nhttp: {sessionless: true}\n" +
		"rate_limits: {default: {rate: 1000000, burst: 1000000}}\nbackends: [" + backend + "]\n"))
	if err != nil {
		tb.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "mcpgate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	gw, err := gateway.New(ctx, cfg, gateway.Options{Store: st})
	if err != nil {
		tb.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); gw.Run(runCtx) }()
	tb.Cleanup(func() { cancel(); <-done; gw.Close(context.Background()) })
	secret, _, err := gw.Tokens().Create(ctx, "front", "viewer", time.Time{})
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(gw.Handler())
	tb.Cleanup(ts.Close)
	conn, err := mcphttp.DialStreamable(ctx, ts.URL+"/mcp", mcphttp.ClientOptions{Header: http.Header{"Authorization": {"Bearer " + secret}}})
	if err != nil {
		tb.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{})
	tb.Cleanup(func() { c.Close() })
	if got, err := c.Connect(ctx, era); err != nil || got != era {
		tb.Fatalf("connect as %s: %v (spoke %s)", era, err, got)
	}
	testkit.WaitFor(tb, "the backend's tool listed", func() bool {
		res, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":`+strconv.Quote(listed)+`,"arguments":{}}`))
		return err == nil && !bytes.Contains(res, []byte(`"isError":true`))
	})
	return c
}
