// sessionless_backend_test.go pins the gateway in front of backends that
// speak 2026-07-28: the backend client learns the era (server/discover)
// and speaks it, and callers of both eras get what the fixture gives when
// served directly — a 2026-07-28 caller the backend's multi round-trip
// results (their requestState sealed for it), a 2025 caller the same
// inputs asked on its session — over the http and stdio backend kinds.

package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// slFixtureHTTP serves the fixture with 2026-07-28 beside the 2025 era,
// counting the POSTs that opened a 2025 session (initialize) and those of
// the sessionless era.
func slFixtureHTTP(t *testing.T) (url string, initializes, sessionless *atomic.Int32) {
	t.Helper()
	initializes, sessionless = new(atomic.Int32), new(atomic.Int32)
	h := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{Sessionless: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			switch {
			case r.Header.Get(mcphttp.HeaderMethod) != "":
				sessionless.Add(1)
			case r.Header.Get(mcphttp.HeaderSessionID) == "":
				initializes.Add(1)
			}
		}
		h.ServeHTTP(w, r)
	}))
	ts := httptest.NewServer(mcphttp.Guard(mux, mcphttp.GuardOptions{}))
	t.Cleanup(func() { h.Close(); ts.CloseClientConnections(); ts.Close() })
	return ts.URL + "/mcp", initializes, sessionless
}

// The three suites through the gateway, the fixture a sessionless backend
// (http and stdio): every 2025 check passes for 2025 callers, and the
// 2026-07-28 set scores what the fixture scores directly.
func TestConformanceThroughSessionlessBackends(t *testing.T) {
	if testing.Short() {
		t.Skip("six runs of the conformance suites")
	}
	testkit.LeakCheck(t)
	peers.Require(t)
	url, initializes, sessionless := slFixtureHTTP(t)
	direct, df := cnScoreAt(t, url, "2026-07-28")
	initializes.Store(0) // the suite's own, directly; the gateway's are counted from here
	t.Setenv("BK_CHILD_ROLE", "fixture-sessionless")
	for name, backend := range map[string]string{
		"sessionless http backend":  "  - {name: fixture, kind: http, url: \"" + url + "\", prefix: \"-\"}\n",
		"sessionless stdio backend": "  - {name: fixture, kind: stdio, command: [\"" + os.Args[0] + "\"], env_from: {" + bkChildEnv + ": BK_CHILD_ROLE}, prefix: \"-\"}\n",
	} {
		t.Run(name, func(t *testing.T) {
			base, _ := bkGateway(t, "http: {sessionless: true}\nbackends:\n"+backend)
			bkWaitReady(t, base, http.StatusOK)
			bkRequireConformance(t, base) // 0.1.16, 2025 callers
			p, f := cnScore(t, base+"/mcp")
			peers.Score(t, "0.2.0-alpha.12 --requirements 2025-11-25 through a %s: %d passed, %d failed", name, p, f)
			if f != 0 || p == 0 {
				t.Errorf("2025-11-25 requirements through a %s: %d passed, %d failed; want every check", name, p, f)
			}
			p, f = cnScoreAt(t, base+"/mcp", "2026-07-28")
			peers.Score(t, "0.2.0-alpha.12 --requirements 2026-07-28 through a %s: %d passed, %d failed (the fixture directly: %d, %d)", name, p, f, direct, df)
			if p < direct || f > df {
				t.Errorf("2026-07-28 requirements through a %s: %d passed, %d failed; the fixture directly %d, %d", name, p, f, direct, df)
			}
		})
	}
	if n := initializes.Load(); n != 0 {
		t.Errorf("the http backend got %d initialize POSTs; it speaks 2026-07-28 and should get none", n)
	}
	if sessionless.Load() == 0 {
		t.Error("the http backend got no sessionless request")
	}
}
