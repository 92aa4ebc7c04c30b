// metrics_test.go pins the gateway's /metrics through real HTTP: who may
// read it (admins on the main address; anyone on the loopback-only
// metrics.listen), that every gated call is counted with the outcome the
// audit log would record, and that no label carries what a caller chose —
// an unknown name, an argument, a URI's variables, a credential.
//
// Every identifier here starts with "mt".

package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// mtSeries parses the text exposition into values by series, written as
// Prometheus writes them: name{label="value",…} with labels sorted.
func mtSeries(t *testing.T, text []byte) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// mtScrape reads /metrics with the Authorization value auth.
func mtScrape(e *gwEnv, auth string) gwReply {
	e.t.Helper()
	return e.do(gwRequest{method: http.MethodGet, path: "/metrics", auth: auth})
}

// mtWant fails unless series has exactly value.
func mtWant(t *testing.T, got map[string]float64, series string, value float64) {
	t.Helper()
	v, ok := got[series]
	if !ok {
		t.Errorf("no series %s", series)
		return
	}
	if v != value {
		t.Errorf("%s = %v, want %v", series, v, value)
	}
}

// Calls with every outcome are counted by kind, catalogued name and
// outcome; their codes, durations and rate denials likewise.
func TestMetricsCountGatedCallsByOutcome(t *testing.T) {
	e := gwStart(t, `rate_limits:
  default: {rate: 0}
  entries:
    - {kind: tool, name: "expensive_*", rate: 0.001, burst: 1}
`)
	admin, _ := e.token("root", "admin")
	viewer, _ := e.token("alice", "viewer")
	ctx := testkit.Context(t)
	c := e.dial(gwStreamable, gwBearer(viewer))
	legacy, _ := e.sseSession(gwBearer(viewer))

	const secretArg = "sk-live-4f9a8b7c6d5e4f3a2b1c"
	const unknownTool = "no_such_tool_7d3e"
	if _, err := gwCallTool(ctx, c, gwToolEcho, map[string]any{"text": secretArg}); err != nil {
		t.Fatalf("echo: %v", err)
	}
	if res, err := gwCallTool(ctx, c, gwToolFail, nil); err != nil || !gwIsToolError(res) {
		t.Fatalf("fail_tool: %s %v", res, err)
	}
	_, err := gwCallTool(ctx, c, gwToolAdmin, nil)
	gwWantRefusal(t, "admin tool as viewer", err, jsonrpc.CodeForbidden, "forbidden")
	if _, err := gwCallTool(ctx, c, unknownTool, map[string]any{"token": secretArg}); err == nil {
		t.Fatal("unknown tool: no error")
	}
	if got := gwCallN(t, c, gwToolExpensive, 2); got != 1 {
		t.Fatalf("expensive_report admitted %d of 2, want 1", got)
	}
	if _, err := gwCall(ctx, legacy, "prompts/get", map[string]any{"name": gwPromptGreet}); err != nil {
		t.Fatalf("prompts/get over sse: %v", err)
	}
	if _, err := gwCall(ctx, c, "no/such/method", map[string]any{}); err == nil {
		t.Fatal("unknown method: no error")
	}
	ac := e.dial(gwStreamable, gwBearer(admin))
	if _, err := gwCall(ctx, ac, "resources/read", map[string]any{"uri": "mem://notes/secret-42"}); err != nil {
		t.Fatalf("template read as admin: %v", err)
	}

	rep := mtScrape(e, gwBearer(admin))
	if rep.status != http.StatusOK {
		t.Fatalf("GET /metrics as admin: %d %s", rep.status, rep.body)
	}
	got := mtSeries(t, rep.body)
	calls := func(kind, name, outcome string) string {
		return fmt.Sprintf(`mcpgate_calls_total{backend="",kind=%q,name=%q,origin="",outcome=%q}`, kind, name, outcome)
	}
	mtWant(t, got, calls("tool", gwToolEcho, "ok"), 1)
	mtWant(t, got, calls("tool", gwToolFail, "tool_error"), 1)
	mtWant(t, got, calls("tool", gwToolAdmin, "forbidden"), 1)
	mtWant(t, got, calls("tool", "unknown", "invalid"), 1)
	mtWant(t, got, calls("tool", gwToolExpensive, "ok"), 1)
	mtWant(t, got, calls("tool", gwToolExpensive, "rate_limited"), 1)
	mtWant(t, got, calls("prompt", gwPromptGreet, "ok"), 1)
	mtWant(t, got, calls("resource", gwTemplNotes, "ok"), 1)

	mtWant(t, got, `mcpgate_requests_total{method="tools/call"}`, 6)
	mtWant(t, got, `mcpgate_requests_total{method="prompts/get"}`, 1)
	mtWant(t, got, `mcpgate_requests_total{method="initialize"}`, 3)
	mtWant(t, got, `mcpgate_requests_total{method="unknown"}`, 1)

	mtWant(t, got, fmt.Sprintf(`mcpgate_call_errors_total{code="%d"}`, jsonrpc.CodeForbidden), 1)
	mtWant(t, got, fmt.Sprintf(`mcpgate_call_errors_total{code="%d"}`, jsonrpc.CodeInvalidParams), 1)
	mtWant(t, got, fmt.Sprintf(`mcpgate_call_errors_total{code="%d"}`, jsonrpc.CodeRateLimited), 1)
	mtWant(t, got, `mcpgate_rate_limited_total{role="viewer"}`, 1)

	duration := func(series, kind, name string) string {
		return fmt.Sprintf(`mcpgate_call_duration_seconds_%s{backend="",kind=%q,name=%q`, series, kind, name)
	}
	mtWant(t, got, duration("count", "tool", gwToolEcho)+"}", 1)
	mtWant(t, got, duration("count", "tool", gwToolExpensive)+"}", 2)
	mtWant(t, got, duration("bucket", "tool", gwToolExpensive)+`,le="+Inf"}`, 2)
	mtWant(t, got, duration("count", "prompt", gwPromptGreet)+"}", 1)
	if _, ok := got[duration("bucket", "tool", gwToolEcho)+`,le="0.0001"}`]; !ok {
		t.Error("no 100µs bucket")
	}
	if _, ok := got[duration("bucket", "tool", gwToolEcho)+`,le="30"}`]; !ok {
		t.Error("no 30s bucket")
	}
	// Denials by reason: the admin tool for the role, the second
	// expensive call for the rate; the others at zero from the start.
	mtWant(t, got, `mcpgate_denials_total{reason="role"}`, 1)
	mtWant(t, got, `mcpgate_denials_total{reason="rate"}`, 1)
	mtWant(t, got, `mcpgate_denials_total{reason="policy"}`, 0)
	mtWant(t, got, `mcpgate_denials_total{reason="session_cap"}`, 0)
	mtWant(t, got, `mcpgate_streams_open{era="2025",transport="legacy"}`, 1)
	mtWant(t, got, `mcpgate_streams_open{era="2026",transport="streamable"}`, 0)
	mtWant(t, got, `mcpgate_dependency_up{dependency="store"}`, 1)

	mtWant(t, got, `mcpgate_sessions_open{transport="streamable"}`, 2)
	mtWant(t, got, `mcpgate_sessions_open{transport="legacy"}`, 1)
	if got["mcpgate_rate_buckets"] < 1 {
		t.Errorf("mcpgate_rate_buckets = %v, want ≥ 1", got["mcpgate_rate_buckets"])
	}
	for _, s := range []string{"mcpgate_audit_queued", "mcpgate_audit_written_total", "mcpgate_audit_write_errors_total", "mcpgate_audit_lost_total"} {
		if _, ok := got[s]; !ok {
			t.Errorf("no series %s", s)
		}
	}

	// What a caller chose never becomes a label.
	for _, leak := range []string{secretArg, unknownTool, "secret-42", "no/such/method", admin, viewer} {
		if bytes.Contains(rep.body, []byte(leak)) {
			t.Errorf("/metrics contains %q", leak)
		}
	}
}

// /metrics names every entry and role: admins only, and never without a
// credential.
func TestMetricsNeedAnAdmin(t *testing.T) {
	e := gwStart(t, "")
	viewer, _ := e.token("alice", "viewer")
	editor, _ := e.token("bob", "editor")
	for _, c := range []struct {
		who, auth string
		want      int
	}{
		{"no credential", "", http.StatusUnauthorized},
		{"unknown token", gwBearer(gwUnknownToken()), http.StatusUnauthorized},
		{"viewer", gwBearer(viewer), http.StatusForbidden},
		{"editor", gwBearer(editor), http.StatusForbidden},
	} {
		if rep := mtScrape(e, c.auth); rep.status != c.want {
			t.Errorf("GET /metrics as %s: %d, want %d", c.who, rep.status, c.want)
		} else if bytes.Contains(rep.body, []byte("mcpgate_")) {
			t.Errorf("GET /metrics as %s: body shows metrics: %s", c.who, rep.body)
		} else if c.want == http.StatusForbidden && !bytes.Contains(rep.body, []byte("needs the admin role")) ||
			c.want == http.StatusForbidden && !bytes.Contains(rep.body, []byte("role is "+c.who)) {
			t.Errorf("GET /metrics as %s: %q does not say which role it needs and which the caller has", c.who, rep.body)
		}
	}
}

// A custom role mapped onto admin reads /metrics like admin does.
func TestMetricsAdminByBaseRole(t *testing.T) {
	e := gwStart(t, "roles:\n  operator: admin\n")
	op, _ := e.token("ops", "operator")
	if rep := mtScrape(e, gwBearer(op)); rep.status != http.StatusOK {
		t.Fatalf("GET /metrics as operator: %d", rep.status)
	}
}

// metrics.listen serves /metrics without a credential, on loopback only.
func TestMetricsListenLoopbackOnly(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	for _, listen := range []string{"0.0.0.0:9464", ":9464", "192.0.2.1:9464"} {
		t.Run(listen, func(t *testing.T) {
			gw, err := mtNew(ctx, t, "metrics:\n  listen: \""+listen+"\"\n")
			if err == nil {
				_ = gw.Close(ctx)
				t.Fatalf("gateway.New with metrics.listen %s: no error", listen)
			}
			if !errors.Is(err, auth.ErrNotLoopback) || !strings.Contains(err.Error(), "metrics.listen") {
				t.Errorf("error %v: want auth.ErrNotLoopback naming metrics.listen", err)
			}
		})
	}

	e := gwStart(t, "metrics:\n  listen: 127.0.0.1:9464\n")
	h := e.gw.MetricsHandler()
	if h == nil {
		t.Fatal("MetricsHandler is nil with metrics.listen set")
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body.Bytes(), []byte("mcpgate_sessions_open")) {
		t.Errorf("GET metrics.listen /metrics: %d %.200s", resp.StatusCode, body.Bytes())
	}

	if gwStart(t, "").gw.MetricsHandler() != nil {
		t.Error("MetricsHandler is not nil without metrics.listen")
	}
}

// mtNew builds a gateway from yamlText on a fresh store, returning
// gateway.New's error.
func mtNew(ctx context.Context, t *testing.T, yamlText string) (*gateway.Gateway, error) {
	t.Helper()
	cfg, err := config.Parse([]byte(yamlText))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, t.TempDir()+"/mcpgate.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return gateway.New(ctx, cfg, gateway.Options{Store: st, Catalogue: gwCatalogue(&gwProbe{runs: map[string]int{}})})
}
