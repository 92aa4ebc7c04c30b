//go:build unix

// overview_browser_test.go drives the console's overview of a real
// `mcpgate serve` in a real headless Chromium: its charts are drawn, and
// they move when calls are made, without a reload. The screenshot is the
// README's (docs/console-overview.png, copied from the artifact folder).

package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestTheOverviewsChartsMoveWithTheCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	ctx := browser(t)
	bin := testkit.Mcpgate(t)
	db := t.TempDir() + "/mcpgate.db"
	srv := cliStart(t, bin, "serve", "--listen", "127.0.0.1:0", "--store", db)
	printed := strings.Join(srv.waitLine(t, "the console line", func(l string) bool { return strings.HasPrefix(l, "console:") }), "\n")
	mcpURL, admin := cliMCPURLRE.FindString(printed), cliTokenRE.FindString(printed)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	out, stderr, err := cliRun(t, bin, "token", "create", "--store", db, "--name", "reader", "--role", "viewer")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, stderr)
	}
	viewer := cliTokenRE.FindString(out)
	session := cliSession(t, mcpURL, viewer)
	calls := func(n int, tool string) {
		for i := range n {
			cliPost(t, mcpURL, viewer, session, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, 10+i, tool))
		}
	}
	calls(6, "test_simple_text")
	calls(2, "test_error_handling")

	b := tab{t, ctx}
	b.do("open the console", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.do("type the admin's token", chromedp.SetValue(chromedp.ID("token"), admin))
	if status := b.submit("log in", "#login"); status != http.StatusOK {
		t.Fatalf("login answered %d", status)
	}
	b.do("the 15 minutes", chromedp.Click(chromedp.CSS(`nav.ranges a[href="/admin/?range=15m"]`)), chromedp.WaitVisible(chromedp.ID("latency")))
	drawn := func(sel string) string {
		t.Helper()
		d, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('`+sel+`') || {getAttribute: () => ''}).getAttribute('d') || ''`))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, sel := range []string{"#chart path.calls", "#chart path.errors", "#latency path.p99", "#latency path.p50", "#sessions path"} {
		if d := drawn(sel); !strings.HasPrefix(d, "M") {
			t.Errorf("%s is not drawn: d=%q", sel, d)
		}
	}
	// Drawn, not only written: the latency chart has a height on screen.
	h, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('#latency').getBoundingClientRect().height`))
	if err != nil || h < 40 {
		t.Errorf("the latency chart is %v px high (%v)", h, err)
	}
	if got := b.text("#top-callers"); !strings.Contains(got, "reader") {
		t.Errorf("the most calls do not name the caller:\n%s", got)
	}
	if got := b.text(`#backend-history tr[data-backend="demo"]`); !strings.Contains(got, "demo") {
		t.Errorf("the backend's row: %q", got)
	}
	strip, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#backend-history rect.st-up, #backend-history rect.st-flap').length`))
	if err != nil || strip == 0 {
		t.Errorf("the demo backend's strip has no up step (%v)", err)
	}
	before := b.text(".card p.muted")
	shot(t, ctx, "overview")

	// More calls: the page refreshes its charts by itself.
	calls(5, "test_simple_text")
	moved := `document.querySelector('.card p.muted').textContent !== ` + strconv.Quote(before)
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](moved, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the charts did not move in 30 s after 5 calls (still %q): %v", before, err)
	}
	if got := b.text(".card p.muted"); !strings.Contains(got, "13 calls") {
		t.Errorf("after 5 more calls the range says %q, want 13 calls", got)
	}
}
