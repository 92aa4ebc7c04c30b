//go:build unix

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// A person who is not an admin, on a phone's width, logs in to a real
// `mcpgate serve` whose backend acts as each caller, lands on My
// credentials, stores their key and sees it stored (never shown), with
// nothing wider than the screen. Its screenshot is the README's.
func TestMyCredentialsInABrowserOnAPhone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	ctx := browser(t)
	bin := testkit.Mcpgate(t)
	h := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{})
	backend := httptest.NewServer(h)
	t.Cleanup(func() { backend.Close(); h.Close() })
	dir := t.TempDir()
	keyFile, cfgPath := filepath.Join(dir, "vault.key"), filepath.Join(dir, "mcpgate.yaml")
	writeText(t, keyFile, strings.Repeat("d4", 32))
	writeText(t, cfgPath, fmt.Sprintf("listen: 127.0.0.1:0\nstore: %q\nvault: {key_file: %q}\nbackends:\n"+
		"  - {name: tickets, kind: http, url: %q, identity: per_user, credential: {vault: {header: X-Api-Key}}}\n",
		filepath.Join(dir, "mcpgate.db"), keyFile, backend.URL+"/"))
	out, stderr, err := cliRun(t, bin, "token", "create", "--config", cfgPath, "--name", "dana", "--role", "viewer")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, stderr)
	}
	token := cliTokenRE.FindString(out)
	srv := cliStart(t, bin, "serve", "--config", cfgPath)
	base := strings.TrimSuffix(cliMCPURLRE.FindString(strings.Join(srv.waitLine(t, "the MCP URL", cliMCPURLRE.MatchString), "\n")), "/mcp")

	b := tab{t, ctx}
	do, text, submit := b.do, b.text, b.submit
	do("a phone's screen", chromedp.EmulateViewport(390, 844))
	do("open the console", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.fits("the login page", 390)
	shot(t, ctx, "login-phone")
	do("type the token", chromedp.SendKeys(chromedp.ID("token"), token))
	if status := submit("log in", "#login"); status != http.StatusOK {
		t.Fatalf("a viewer's login answered %d", status)
	}
	if got := text("h1"); got != "My credentials" {
		t.Fatalf("a viewer lands on %q", got)
	}
	if got := text(`.credential[data-backend="tickets"]`); !strings.Contains(got, "Not stored") || !strings.Contains(got, "X-Api-Key") {
		t.Errorf("before storing: %q", got)
	}
	do("type a key", chromedp.SendKeys(chromedp.ID("value-tickets"), "sk-dana-phone"))
	if status := submit("store it", `.credential[data-backend="tickets"] form.stack button`); status != http.StatusOK {
		t.Fatalf("storing answered %d", status)
	}
	if got := text(".flash"); !strings.Contains(got, "Stored your credential for tickets") {
		t.Errorf("after storing: %q", got)
	}
	if got := text(`.credential[data-backend="tickets"]`); !strings.Contains(got, "Stored") || strings.Contains(got, "sk-dana") {
		t.Errorf("after storing, the card says %q", got)
	}
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil || strings.Contains(html, "sk-dana") {
		t.Errorf("the page holds the key (%v)", err)
	}
	b.fits("My credentials", 390)
	b.looksLikeTheConsole("My credentials")
	shot(t, ctx, "credentials-phone")
}
