// refserver_test.go scores the conformance suite's own reference server
// (the "everything server" of the conformance repository, v0.1.16, from
// ../shared/peers) directly and through the gateway as an http backend, in
// shared and in per-client mode: a real server must score the same through
// the gateway as it does alone (or better). Our fixture hid bugs (it sends server
// requests on the POST stream, and no priming events); this server does
// neither.
//
// Every identifier here starts with "rf" so that it cannot collide with
// the other tests of this package.

package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// rfStart runs the reference server on a free loopback port and returns
// its MCP URL; it is stopped (its process group) when the test ends.
func rfStart(t *testing.T) string {
	t.Helper()
	ref := peers.RequireRefServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url, stop, err := ref.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

// rfScore is each scenario's check statuses, sorted: what the suite saw.
func rfScore(t *testing.T, url string) map[string]string {
	t.Helper()
	score := map[string]string{}
	for name, cs := range bkConformance(t, url) {
		var st []string
		for _, c := range cs {
			st = append(st, c.ID+"="+c.Status)
		}
		sort.Strings(st)
		score[name] = strings.Join(st, " ")
	}
	return score
}

// rfPassed counts the successful checks of a score.
func rfPassed(score map[string]string) (passed, failed int) {
	for _, s := range score {
		passed += strings.Count(s, "=SUCCESS")
		failed += strings.Count(s, "=FAILURE")
	}
	return passed, failed
}

func TestReferenceServerScoresTheSameThroughTheGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of the conformance suite")
	}
	testkit.LeakCheck(t)
	url := rfStart(t)
	direct := rfScore(t, url)
	p, f := rfPassed(direct)
	peers.Score(t, "0.1.16 --suite all: the reference server directly: %d passed, %d failed", p, f)
	if p != 44 || f != 0 {
		t.Fatalf("the reference server alone scores %d passed, %d failed; want 44/0", p, f)
	}
	for _, mode := range []string{"shared", "per-client"} {
		t.Run(mode, func(t *testing.T) {
			base, _ := bkGateway(t, fmt.Sprintf("backends:\n  - {name: ref, kind: http, url: %q, prefix: \"-\", session: %s}\n", url, mode))
			bkWaitReady(t, base, http.StatusOK)
			through := rfScore(t, base+"/mcp")
			p, f := rfPassed(through)
			peers.Score(t, "0.1.16 --suite all: the reference server through the gateway (%s): %d passed, %d failed; server-sse-polling: %s", mode, p, f, through["server-sse-polling"])
			rfCompare(t, direct, through)
		})
	}
}

// rfCompare requires every check that passes alone to pass through the
// gateway, no scenario to fail more there than alone, and as many checks
// to pass. INFO and WARNING are notes, not grades: the gateway's own
// priming event turns two of server-sse-polling's warnings into successes
// and adds a note of its own.
func rfCompare(t *testing.T, direct, through map[string]string) {
	t.Helper()
	for name, want := range direct {
		got := through[name]
		for _, check := range strings.Fields(want) {
			id, status, _ := strings.Cut(check, "=")
			if status == "SUCCESS" && !strings.Contains(" "+got+" ", " "+id+"=SUCCESS ") {
				t.Errorf("%s: %s passes alone, not through the gateway: %s", name, id, got)
			}
		}
		if gf, df := strings.Count(got, "=FAILURE"), strings.Count(want, "=FAILURE"); gf > df {
			t.Errorf("%s fails through the gateway:\n got %s\nalone %s", name, got, want)
		}
	}
	if dp, _ := rfPassed(direct); func() bool { p, _ := rfPassed(through); return p < dp }() {
		p, _ := rfPassed(through)
		t.Errorf("%d checks pass through the gateway, %d alone", p, dp)
	}
}
