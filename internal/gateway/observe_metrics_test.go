// observe_metrics_test.go pins what /metrics shows of the gateway's
// moving parts, scraped over real HTTP: a real stdio backend killed and
// restarted (mcpgate_backend_up and mcpgate_backend_restarts_total), and
// open sessions rising and falling with real client sessions on every
// transport (mcpgate_sessions_open). No secret given to a backend ever
// appears there.
//
// Every identifier here starts with "ob".

package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// obScrapeBase reads /metrics at base without a credential (the gateway
// runs without authentication, as its local admin).
func obScrapeBase(t *testing.T, base string) (map[string]float64, string) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v %.300s", resp.StatusCode, err, b)
	}
	return mtSeries(t, b), string(b)
}

// obWaitMetrics scrapes until ok holds of the series, within a bound, and
// returns the last scrape.
func obWaitMetrics(t *testing.T, what string, scrape func() (map[string]float64, string), ok func(map[string]float64) bool) (map[string]float64, string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, text := scrape()
		if ok(got) {
			return got, text
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never showed %s; last scrape:\n%s", what, obGrep(text, "mcpgate_backend_", "mcpgate_sessions_"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// obGrep keeps the lines of text that start with one of prefixes.
func obGrep(text string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}

// A stdio backend killed shows down, stays down while it cannot start
// (its restarts counted), and shows up again once it can, with the
// restarts it took; its secret never reaches /metrics.
func TestMetricsFollowABackendKilledAndRestarted(t *testing.T) {
	testkit.LeakCheck(t)
	dir := t.TempDir()
	gate, pidFile := filepath.Join(dir, "refuse-start"), filepath.Join(dir, "pid")
	const secret = "ob-backend-secret-93c1e2"
	t.Setenv("OB_CHILD_ROLE", "fixture")
	t.Setenv("OB_SECRET", secret)
	t.Setenv("OB_GATE", gate)
	t.Setenv("OB_PIDFILE", pidFile)
	// The shell refuses to start while the gate file exists, and otherwise
	// writes its pid and becomes the fixture (this test binary).
	script := `if [ -e "$OB_GATE" ]; then exit 3; fi; echo $$ > "$OB_PIDFILE"; exec "$0"`
	base, _ := bkGateway(t, fmt.Sprintf("backends:\n  - name: fx\n    kind: stdio\n    command: [\"/bin/sh\", \"-c\", %q, %q]\n"+
		"    env_from: {%s: OB_CHILD_ROLE, FX_TOKEN: OB_SECRET}\n", script, os.Args[0], bkChildEnv))
	scrape := func() (map[string]float64, string) { return obScrapeBase(t, base) }
	const up, restarts = `mcpgate_backend_up{backend="fx"}`, `mcpgate_backend_restarts_total{backend="fx"}`

	got, text := obWaitMetrics(t, "fx up", scrape, func(m map[string]float64) bool { return m[up] == 1 })
	if got[restarts] != 0 {
		t.Errorf("%s = %v before any failure", restarts, got[restarts])
	}
	since := got[`mcpgate_backend_state_since_seconds{backend="fx"}`]
	if since == 0 {
		t.Errorf("no mcpgate_backend_state_since_seconds for fx:\n%s", obGrep(text, "mcpgate_backend_"))
	}
	pidText, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatalf("pid file %q: %v", pidText, err)
	}

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill backend %d: %v", pid, err)
	}
	got, text = obWaitMetrics(t, "fx down after a failed restart", scrape, func(m map[string]float64) bool {
		return m[up] == 0 && m[restarts] >= 1
	})
	if strings.Contains(text, secret) {
		t.Errorf("/metrics shows the backend's secret")
	}
	down := got[restarts]

	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	got, text = obWaitMetrics(t, "fx up again", scrape, func(m map[string]float64) bool { return m[up] == 1 })
	if got[restarts] < down {
		t.Errorf("%s = %v after recovery, want at least %v", restarts, got[restarts], down)
	}
	if s := got[`mcpgate_backend_state_since_seconds{backend="fx"}`]; s <= since {
		t.Errorf("state_since %v did not move on from %v", s, since)
	}
	if strings.Contains(text, secret) {
		t.Errorf("/metrics shows the backend's secret")
	}
}

// mcpgate_sessions_open rises as clients open sessions on each transport
// and falls as they end them: DELETE on Streamable HTTP, the stream's end
// on legacy SSE, stdin's end on stdio.
func TestMetricsSessionsOpenRiseAndFall(t *testing.T) {
	e := gwStart(t, "")
	admin, _ := e.token("root", "admin")
	scrape := func() (map[string]float64, string) {
		rep := mtScrape(e, gwBearer(admin))
		if rep.status != http.StatusOK {
			t.Fatalf("GET /metrics: %d", rep.status)
		}
		return mtSeries(t, rep.body), string(rep.body)
	}
	open := func(transport string) string { return fmt.Sprintf(`mcpgate_sessions_open{transport=%q}`, transport) }
	want := func(streamable, legacy, stdio float64) func(map[string]float64) bool {
		return func(m map[string]float64) bool {
			return m[open("streamable")] == streamable && m[open("legacy")] == legacy && m[open("stdio")] == stdio
		}
	}
	got, _ := scrape()
	for _, tr := range []string{"streamable", "legacy", "stdio"} {
		if v, ok := got[open(tr)]; !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0 before any session", open(tr), v, ok)
		}
	}

	id := e.initialize(admin)
	c := e.dial(gwStreamable, gwBearer(admin))
	legacy, _ := e.sseSession(gwBearer(admin))
	inR, inW := io.Pipe()
	stdioDone := make(chan error, 1)
	go func() { stdioDone <- e.gw.ServeStdio(context.Background(), inR, io.Discard) }()
	obWaitMetrics(t, "2 streamable, 1 legacy, 1 stdio session", scrape, want(2, 1, 1))

	if rep := e.do(gwRequest{method: http.MethodDelete, path: "/mcp", auth: gwBearer(admin), session: id}); rep.status/100 != 2 {
		t.Fatalf("DELETE session: %d %s", rep.status, rep.body)
	}
	got, _ = scrape()
	if got[open("streamable")] != 1 {
		t.Errorf("after DELETE: %s = %v, want 1", open("streamable"), got[open("streamable")])
	}
	_ = c.Close() // sends DELETE
	_ = legacy.Close()
	_ = inW.Close()
	if err := <-stdioDone; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
	obWaitMetrics(t, "no session open", scrape, want(0, 0, 0))
}
