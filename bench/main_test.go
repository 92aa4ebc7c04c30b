// main_test.go runs the harness once in its short mode: not to measure
// anything (no figure is checked against a number), only to show that
// every path still starts, answers and is stopped.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// TestMain lets the test binary play the harness's relay roles, as the
// harness starts itself again for them; otherwise it runs the tests.
func TestMain(m *testing.M) {
	if role := os.Getenv(childRole); role != "" {
		if err := runRole(role, os.Args[1:]); err != nil {
			os.Stderr.WriteString("bench: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	testkit.Main(m)
}

// The short run measures every path of the issue, every row answers
// without error, and the report holds every figure the targets name.
func TestShortRunMeasuresEveryPathAndReportsEveryFigure(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// supergateway runs when installed, or when the peers are required (CI);
	// the test does not install it by itself.
	withPeers := os.Getenv("MCPGATE_REQUIRE_PEERS") != ""
	if p, ok := peers.Find(); ok {
		_, err := os.Stat(filepath.Join(p.Dir, "node_modules", "supergateway", "dist", "index.js"))
		withPeers = withPeers || err == nil
	}
	if !withPeers {
		t.Log("supergateway is not installed (scripts/peers.sh): its row is left out")
	}
	var log bytes.Buffer
	if err := run(ctx, options{short: true, out: out, peers: withPeers}, &log); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, r := range res.Rows {
		paths[r.Path] = true
		if r.Stats.Calls == 0 || r.Stats.Errors != 0 {
			t.Errorf("%s %s: %d calls, %d errors (%s)", r.Path, r.Load, r.Stats.Calls, r.Stats.Errors, r.FirstError)
		}
	}
	want := []string{"null-relay", "direct", "mcpgate-http", "mcpgate-http-2026", "mcpgate-stdio", "wire-per-path", "wire-framed",
		"wire-framed-prompts", "wire-per-path-stdio", "wire-framed-stdio", "go-sdk-http", "go-sdk-stdio", "null-relay-64k", "mcpgate-http-64k"}
	if withPeers {
		want = append(want, "supergateway-stdio")
	}
	for _, p := range want {
		if !paths[p] {
			t.Errorf("no row for %s", p)
		}
	}
	if res.Postgres == nil && os.Getenv("MCPGATE_REQUIRE_PEERS") != "" {
		t.Error("the Postgres pair was not measured (PostgreSQL is required)")
	}
	for _, r := range res.Ratios {
		if missing := missingService(r.Name); r.Absent && missing != nil && os.Getenv("MCPGATE_REQUIRE_PEERS") == "" {
			t.Logf("figure %q left out: %v", r.Name, missing)
			continue
		}
		if r.Absent && (withPeers || !strings.Contains(r.Name, "supergateway")) {
			t.Errorf("figure %q: a row it needs did not run", r.Name)
		}
	}
	if len(res.Sessions) == 0 || !res.Sessions[len(res.Sessions)-1].Held {
		t.Errorf("idle sessions: %+v", res.Sessions)
	}
	if len(res.Startup.EachMs) == 0 {
		t.Error("no time to first answer")
	}
	// The fixture and the generated one; the reference servers with the
	// peers (the conformance suite's when it is installed: always in CI).
	wantCatalogues := 2
	if withPeers {
		wantCatalogues = 3
		if _, ok := peers.FindRefServer(); ok || os.Getenv("MCPGATE_REQUIRE_PEERS") != "" {
			wantCatalogues = 4
		}
	}
	if len(res.Catalogues) != wantCatalogues {
		t.Errorf("catalogues measured: %+v, want %d", res.Catalogues, wantCatalogues)
	}
	for _, c := range res.Catalogues {
		if c.Tools == 0 || c.FullBytes == 0 || c.CompactBytes == 0 || c.Tools == 500 && (c.SearchBytes == 0 || c.SearchMicros == 0) {
			t.Errorf("catalogue %s: %+v", c.Catalogue, c)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "results.md")); err != nil {
		t.Error(err)
	}
}

// missingService names the service a figure needs that this machine lacks,
// or nil: the Postgres pair needs PostgreSQL, the replica rows PostgreSQL,
// Redis and HAProxy.
func missingService(figure string) error {
	replicas := strings.Contains(figure, "pg-redis") || strings.Contains(figure, "haproxy")
	switch {
	case (replicas || strings.Contains(figure, "Postgres")) && !peers.HavePostgres():
		return peers.ErrNoPostgres
	case replicas && !peers.HaveRedis():
		return peers.ErrNoRedis
	case replicas && !peers.HaveHAProxy():
		return peers.ErrNoHAProxy
	}
	return nil
}
