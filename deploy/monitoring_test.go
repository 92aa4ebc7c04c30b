// monitoring_test.go holds the shipped dashboard (grafana/mcpgate.json)
// and alert rules (prometheus/alerts.yaml) to the code. The rules are
// parsed by Prometheus's own rule parser, which checks their PromQL and
// their templates; the dashboard by Grafana's schema SDK, and its queries
// by Prometheus's PromQL parser. Every
// metric either names is one a gateway exports, so that neither drifts
// from the code when a metric is renamed.

package deploy_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	grafana "github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/mcp"
)

const (
	alertsFile    = "prometheus/alerts.yaml"
	dashboardFile = "grafana/mcpgate.json"
)

var promql = parser.NewParser(parser.Options{})

// The alerts the issue names, each with a severity, a summary and a
// one-line runbook.
func TestAlertRulesParseAndEachSaysWhatToDo(t *testing.T) {
	groups := parseAlerts(t)
	byName := map[string]rulefmt.Rule{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			byName[r.Alert] = r
			if r.Alert == "" {
				t.Errorf("group %s: a rule that is not an alert (%s)", g.Name, r.Record)
			}
			if r.Labels["severity"] != "page" && r.Labels["severity"] != "ticket" {
				t.Errorf("%s: severity %q, want page or ticket", r.Alert, r.Labels["severity"])
			}
			rb := r.Annotations["runbook"]
			if r.Annotations["summary"] == "" || rb == "" || strings.Contains(strings.TrimSpace(rb), "\n") {
				t.Errorf("%s: want a summary and a one-line runbook, have %q", r.Alert, r.Annotations)
			}
		}
	}
	for name, want := range map[string]struct {
		metric string
		for_   time.Duration
	}{
		"MCPGateBackendDown":        {"mcpgate_backend_up", 5 * time.Minute},
		"MCPGateErrorRatioHigh":     {"mcpgate_calls_total", 0},
		"MCPGateLatencyHigh":        {"mcpgate_call_duration_seconds_bucket", 0},
		"MCPGateAuditWritesFailing": {"mcpgate_audit_write_errors_total", 0},
		"MCPGateStoreUnreachable":   {"mcpgate_dependency_up", 0},
		"MCPGateRedisUnreachable":   {"mcpgate_dependency_up", 0},
		"MCPGateDefinitionHeld":     {"mcpgate_definitions_held", 0},
	} {
		r, ok := byName[name]
		if !ok {
			t.Errorf("no alert %s", name)
			continue
		}
		if !slices.Contains(metricsOf(t, r.Expr), want.metric) {
			t.Errorf("%s does not read %s: %s", name, want.metric, r.Expr)
		}
		if want.for_ > 0 && time.Duration(r.For) != want.for_ {
			t.Errorf("%s fires after %v, want %v", name, time.Duration(r.For), want.for_)
		}
	}
}

// The dashboard has its datasource and replica variables, and every
// panel's queries parse and filter on the replica chosen.
func TestTheDashboardsQueriesParseAndFollowTheReplica(t *testing.T) {
	d := readDashboard(t)
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name+":"+v.Type)
	}
	if !slices.Contains(vars, "datasource:datasource") || !slices.Contains(vars, "replica:query") {
		t.Errorf("variables %v, want a datasource and a replica", vars)
	}
	if len(d.exprs()) < 15 {
		t.Fatalf("%d queries: the dashboard is nearly empty", len(d.exprs()))
	}
	for _, e := range d.exprs() {
		if !strings.Contains(e, `instance=~"$replica"`) {
			t.Errorf("a query ignores the replica variable: %s", e)
		}
	}
	d.metrics(t) // every query parses
	for _, want := range []string{"mcpgate_denials_total", "mcpgate_streams_open", "mcpgate_backend_up", "mcpgate_dependency_up",
		"mcpgate_audit_write_errors_total", "mcpgate_call_duration_seconds_bucket", "mcpgate_calls_total"} {
		if !slices.Contains(d.metrics(t), want) {
			t.Errorf("the dashboard shows nothing of %s", want)
		}
	}
}

// The dashboard is Grafana's dashboard model, as Grafana's own schema SDK
// reads it strictly: no unknown field, no required one missing, each
// panel's options those of its type.
func TestTheDashboardIsGrafanasModel(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	plugins.RegisterDefaultPlugins() // the panels' types, for their options
	// The JSON model Grafana imports is this one; the SDK's v2 is the
	// schema of Grafana 12's new dashboards, another format.
	//lint:ignore SA1019 the file is the classic JSON model, on purpose
	var d grafana.Dashboard
	if err := d.UnmarshalJSONStrict(raw); err != nil {
		// A list of no errors is returned as a non-nil error.
		if errs, ok := err.(cog.BuildErrors); !ok || len(errs) > 0 {
			t.Fatalf("%s is not Grafana's dashboard model: %v", dashboardFile, err)
		}
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("%s does not validate: %v", dashboardFile, err)
	}
	if d.Uid == nil || *d.Uid != "mcpgate" || len(d.Panels) < 20 {
		t.Errorf("the dashboard read: uid %v, %d panels", d.Uid, len(d.Panels))
	}
}

// Every metric the rules and the dashboard name is one a gateway with
// every part on exports (tracing, pinning, a store).
func TestTheDashboardAndRulesNameOnlyMetricsTheGatewayExports(t *testing.T) {
	exported := gatewayMetrics(t)
	named := slices.Clone(readDashboard(t).metrics(t))
	for _, g := range parseAlerts(t).Groups {
		for _, r := range g.Rules {
			named = append(named, metricsOf(t, r.Expr)...)
		}
	}
	slices.Sort(named)
	for _, name := range slices.Compact(named) {
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(exported, b) {
				base = b
			}
		}
		if !slices.Contains(exported, base) {
			t.Errorf("%s is named by the dashboard or the rules but no gateway exports it", name)
		}
	}
}

func parseAlerts(t *testing.T) *rulefmt.RuleGroups {
	t.Helper()
	groups, errs := rulefmt.ParseFile(alertsFile, false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
	for _, err := range errs {
		t.Error(err)
	}
	if groups == nil || len(groups.Groups) == 0 {
		t.Fatalf("%s: no rule groups", alertsFile)
	}
	return groups
}

// metricsOf parses a PromQL expression and returns the metric names its
// selectors read.
func metricsOf(t *testing.T, expr string) []string {
	t.Helper()
	e, err := promql.ParseExpr(expr)
	if err != nil {
		t.Errorf("%q: %v", expr, err)
		return nil
	}
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok && vs.Name != "" {
			out = append(out, vs.Name)
		}
		return nil
	})
	return out
}

// dashboard is what the tests read of Grafana's dashboard model.
type dashboard struct {
	Templating struct {
		List []struct{ Name, Type string } `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type    string `json:"type"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

func (d dashboard) exprs() []string {
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	return out
}

// grafanaVars are Grafana's variables, replaced by what Grafana would put
// there before PromQL sees the query.
var grafanaVars = regexp.MustCompile(`\$\{?(\w+)\}?`)

// metrics are the metric names the queries read, each query parsed as
// Prometheus would get it.
func (d dashboard) metrics(t *testing.T) []string {
	var out []string
	for _, e := range d.exprs() {
		e = grafanaVars.ReplaceAllStringFunc(e, func(v string) string {
			if strings.HasPrefix(v, "$__") {
				return "5m" // $__rate_interval, $__interval
			}
			return ".*"
		})
		out = append(out, metricsOf(t, e)...)
	}
	return out
}

// gatewayMetrics are the metric names of a gateway with tracing (to a
// collector never reached), pinning and a store.
func gatewayMetrics(t *testing.T) []string {
	t.Helper()
	cfg, err := config.Parse([]byte("listen: 127.0.0.1:0\ncatalogue: {pinning: enforce}\ntracing: {otlp_endpoint: \"http://127.0.0.1:9\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "mcpgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, err := gateway.New(ctx, cfg, gateway.Options{Store: st, Info: mcp.Implementation{Name: "monitoring-test", Version: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close(ctx) }()
	return g.MetricNames()
}
