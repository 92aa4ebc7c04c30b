// conformance_next_test.go runs the newer official suite, pinned at
// 0.2.0-alpha.12 (an npm prerelease), with --requirements 2025-11-25:
// exactly the scenarios that revision requires. The fixture passes every
// required check served directly, and the same number through the gateway
// as an http and as a stdio backend.
//
// Every identifier here starts with "cn" so that it cannot collide with
// the other tests of this package.

package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// cnTotal is the suite's closing line for the scored scenarios.
var cnTotal = regexp.MustCompile(`(?m)^Total: (\d+) passed, (\d+) failed`)

// cnScore runs the suite's 2025-11-25 requirements against url and
// returns its scored totals.
func cnScore(t *testing.T, url string) (passed, failed int) {
	t.Helper()
	return cnScoreAt(t, url, "2025-11-25")
}

// cnScoreAt runs the suite's requirements of revision against url.
func cnScoreAt(t *testing.T, url, revision string) (passed, failed int) {
	t.Helper()
	p := peers.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, _ := exec.CommandContext(ctx, p.Node22, p.ConformanceNext, "server", "--url", url,
		"--requirements", revision, "-o", t.TempDir()).CombinedOutput()
	m := cnTotal.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no total in the suite's output:\n%s", out)
	}
	passed, _ = strconv.Atoi(string(m[1]))
	failed, _ = strconv.Atoi(string(m[2]))
	if failed > 0 && revision != "2026-07-28" {
		t.Logf("suite output:\n%s", out)
	}
	return passed, failed
}

func TestConformanceNextRequirements20251125(t *testing.T) {
	testkit.LeakCheck(t)
	url, _ := bkFixtureHTTP(t, nil)
	direct, failed := cnScore(t, url)
	if failed != 0 || direct == 0 {
		t.Fatalf("the fixture alone: %d passed, %d failed; want every required check", direct, failed)
	}
	t.Setenv("BK_CHILD_ROLE", "fixture")
	for name, backend := range map[string]string{
		"http backend":  "  - {name: fixture, kind: http, url: \"" + url + "\", prefix: \"-\"}\n",
		"stdio backend": "  - {name: fixture, kind: stdio, command: [\"" + os.Args[0] + "\"], env_from: {" + bkChildEnv + ": BK_CHILD_ROLE}, prefix: \"-\"}\n",
	} {
		t.Run(name, func(t *testing.T) {
			base, _ := bkGateway(t, "backends:\n"+backend)
			bkWaitReady(t, base, http.StatusOK)
			p, f := cnScore(t, base+"/mcp")
			peers.Score(t, "0.2.0-alpha.12 --requirements 2025-11-25: the fixture %d/%d directly, %d passed %d failed through the %s", direct, direct, p, f, name)
			if f != 0 || p != direct {
				t.Errorf("through the %s: %d passed, %d failed; the fixture alone passes %d", name, p, f, direct)
			}
		})
	}
}

// The 2026-07-28 requirement set against the fixture directly, where every
// check must pass, and through the gateway in front of a 2025 http
// backend, 2026-07-28 callers: the backend's requests are relayed as
// multi round-trip requests, and what only a backend of the revision can
// do (the tasks extension; several inputs asked at once, under its own
// keys) fails. That score is held as a floor, so that a regression fails.
// (Through backends of the revision, every check passes:
// sessionless_backend_test.go.)
func TestConformanceNext2026ThroughTheGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of the conformance suite")
	}
	testkit.LeakCheck(t)
	h := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{Sessionless: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mcphttp.Guard(mux, mcphttp.GuardOptions{}))
	t.Cleanup(func() { ts.Close(); h.Close() })
	direct, df := cnScoreAt(t, ts.URL+"/mcp", "2026-07-28")
	peers.Score(t, "0.2.0-alpha.12 --requirements 2026-07-28: the fixture directly: %d passed, %d failed", direct, df)
	url, _ := bkFixtureHTTP(t, nil)
	// call_timeout: the tasks scenarios' 60-second slow_compute runs as a
	// plain call on a 2025 backend; the suite need not wait for it.
	base, _ := bkGateway(t, "backends:\n  - {name: fixture, kind: http, url: \""+url+"\", prefix: \"-\", call_timeout: 3s}\n")
	bkWaitReady(t, base, http.StatusOK)
	through, tf := cnScoreAt(t, base+"/mcp", "2026-07-28")
	peers.Score(t, "0.2.0-alpha.12 --requirements 2026-07-28: the fixture through the gateway, a 2025 http backend: %d passed, %d failed", through, tf)
	if df != 0 || direct == 0 {
		t.Errorf("2026-07-28 directly: %d passed, %d failed; want every check", direct, df)
	}
	if through < 170 {
		t.Errorf("2026-07-28 through a 2025 backend: %d passed (floor 170)", through)
	}
}
