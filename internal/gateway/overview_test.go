package gateway_test

// overview_test.go holds the console's overview to what an operator on
// call asks of it, over real HTTP: the range's calls, latency, denials by
// reason, who and what called and was refused most, each backend's
// latency and up/down strip, and the sessions and streams; a fragment of
// just the charts for the page's refresh; and, on replicas, the note that
// it shows one replica with the link to the fleet's dashboard.

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestTheOverviewShowsWhatChangedInTheRange(t *testing.T) {
	e := gwStart(t, "listen: 127.0.0.1:0\nbackends:\n  - {name: files, kind: http, url: "+strconv.Quote(prFiles(t))+"}\n"+prRules)
	bkRun(t, e.gw)
	ctx := testkit.Context(t)
	viewer, _ := e.token("vic", "viewer")
	admin, _ := e.token("ada", "admin")
	v := prConnect(t, e, viewer, mcp.EraSessionless)
	for range 3 {
		if _, err := gwCallTool(ctx, v, "files__read", map[string]any{"path": "/srv/docs/a"}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, err := gwCallTool(ctx, v, "files__read", map[string]any{"path": "/etc/shadow"}); err == nil {
			t.Fatal("the policy let a viewer read /etc")
		}
	}
	bearer := map[string]string{"Authorization": "Bearer " + admin}
	resp, page := adminDo(t, e, "GET", "/admin/?range=15m", nil, bearer)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /admin/?range=15m: %d", resp.StatusCode)
	}
	for _, want := range []string{
		`<span class="total">policy: 2</span>`, `<span class="total">role: 0</span>`, // denials by reason
		`5 calls, 2 errors in the range.`,
		`class="on">15m</a>`, // the range chosen
		`streamable streams (2026): `, `legacy sessions: 0`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the overview lacks %s", want)
		}
	}
	// The latency chart has a p99 line; the denials chart a policy line
	// that is drawn.
	for _, re := range []string{`<svg id="latency"[^>]*>(?s:.*?)<path class="p99" data-series="p99" fill="none" stroke-width="1.5" d="M[0-9]`,
		`<svg id="denials"[^>]*>(?s:.*?)<path class="s2" data-series="policy" fill="none" stroke-width="1.5" d="M[0-9]`,
		`<table id="top-callers"(?s:.*?)<td class="mono">vic</td><td class="num">5</td><td class="num">2</td>`,
		`<table id="top-denied-entries"(?s:.*?)<td class="mono">files__read</td><td class="num">5</td><td class="num">2</td>`,
		`<tr data-backend="files"><td><strong>files</strong></td><td class="num">5</td><td class="num">2</td>(?s:.*?)<rect class="st-(up|flap)"`, // flap: down while it started
	} {
		if !regexp.MustCompile(re).MatchString(page) {
			t.Errorf("the overview does not match %s", re)
		}
	}
	if strings.Contains(page, `id="fleet"`) {
		t.Error("a lone gateway says it is one replica of several")
	}
	// The refresh's fragment: the charts alone, as the page has them.
	resp, part := adminDo(t, e, "GET", "/admin/?range=6h&part=charts", nil, bearer)
	if resp.StatusCode != http.StatusOK || strings.Contains(part, "<html") || !strings.Contains(part, `class="on">6h</a>`) ||
		!strings.Contains(part, `<span class="total">policy: 2</span>`) || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the charts' fragment: %d %q", resp.StatusCode, part[:min(len(part), 200)])
	}
}
