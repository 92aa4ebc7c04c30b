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
	// Measured 293, 326, 156 and 189 on 2026-12-03 (go1.26), with 2 to
	// spare for a runtime's own drift.
	{"http", mcp.EraSession, 295},
	{"http", mcp.EraSessionless, 328},
	{"stdio", mcp.EraSession, 158},
	{"stdio", mcp.EraSessionless, 191},
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
func relayedCall(t *testing.T, kind string, era mcp.Era) func() {
	ctx := testkit.Context(t)
	var backend string
	switch kind {
	case "http":
		h := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{Sessionless: true})
		t.Cleanup(h.Close)
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		backend = "{name: fx, kind: http, url: " + strconv.Quote(ts.URL) + ", prefix: \"-\"}"
	case "stdio":
		backend = "{name: fx, kind: stdio, command: [" + strconv.Quote(testkit.Mcpgate(t)) + ", fixture, --stdio], prefix: \"-\"}"
	}
	cfg, err := config.Parse([]byte("listen: 127.0.0.1:0\naudit: {disabled: true}\nhttp: {sessionless: true}\n" +
		"rate_limits: {default: {rate: 1000000, burst: 1000000}}\nbackends: [" + backend + "]\n"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "mcpgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	gw, err := gateway.New(ctx, cfg, gateway.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); gw.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done; gw.Close(context.Background()) })
	secret, _, err := gw.Tokens().Create(ctx, "budget", "viewer", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(gw.Handler())
	t.Cleanup(ts.Close)
	conn, err := mcphttp.DialStreamable(ctx, ts.URL+"/mcp", mcphttp.ClientOptions{Header: http.Header{"Authorization": {"Bearer " + secret}}})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(conn, mcp.ClientOptions{})
	t.Cleanup(func() { c.Close() })
	if got, err := c.Connect(ctx, era); err != nil || got != era {
		t.Fatalf("connect as %s: %v (spoke %s)", era, err, got)
	}
	testkit.WaitFor(t, "the fixture's tool listed", func() bool {
		res, err := c.Call(ctx, "tools/list", nil)
		return err == nil && bytes.Contains(res, []byte(`"test_simple_text"`))
	})
	params := json.RawMessage(`{"name":"test_simple_text","arguments":{}}`)
	return func() {
		if _, err := c.Call(ctx, "tools/call", params); err != nil {
			t.Fatal(err)
		}
	}
}
