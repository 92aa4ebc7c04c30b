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
	"github.com/mcpgate/mcpgate/internal/oauthtest"
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
	token, _, base := serveAViewer(t, bin, cfgPath, "dana")

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

// A person on a phone authorizes a per_user backend of oauth themselves:
// My credentials says it is not authorized and offers to; the link goes
// to the backend's authorization server and back to the gateway's
// callback page, which has the console's look, says what was granted to
// whom, and fits the screen; My credentials then says authorized and
// offers to revoke. An admin revokes it with mcpgate credentials delete:
// the token is revoked at the authorization server, and the page says
// not authorized again. Its screenshots are the README's.
func TestAPersonAuthorizesABackendInABrowserOnAPhone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	ctx := browser(t)
	bin := testkit.Mcpgate(t)
	is := oauthtest.New(t, "")
	h := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{})
	t.Cleanup(h.Close)
	resource := is.Protect(t, h)
	dir := t.TempDir()
	keyFile, cfgPath := filepath.Join(dir, "vault.key"), filepath.Join(dir, "mcpgate.yaml")
	writeText(t, keyFile, strings.Repeat("d5", 32))
	writeText(t, cfgPath, fmt.Sprintf("listen: 127.0.0.1:0\nstore: %q\nvault: {key_file: %q}\noutbound: {allow_hosts: [127.0.0.1]}\nbackends:\n"+
		"  - {name: tickets, kind: http, url: %q, identity: per_user, credential: {oauth: {}}}\n",
		filepath.Join(dir, "mcpgate.db"), keyFile, resource))
	token, id, base := serveAViewer(t, bin, cfgPath, "erin")

	b := tab{t, ctx}
	do, text, submit := b.do, b.text, b.submit
	do("a phone's screen", chromedp.EmulateViewport(390, 844))
	do("open the console", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(chromedp.ID("token")))
	do("type the token", chromedp.SendKeys(chromedp.ID("token"), token))
	if status := submit("log in", "#login"); status != http.StatusOK {
		t.Fatalf("a viewer's login answered %d", status)
	}
	card := `.credential[data-backend="tickets"]`
	if got := text(chromedp.CSS(card)); !strings.Contains(got, "Not authorized") || !strings.Contains(got, "Authorize tickets") {
		t.Fatalf("before authorizing: %q", got)
	}
	if status := submit("authorize", chromedp.CSS(card+" a.button")); status != http.StatusOK {
		t.Fatalf("the authorization ended on a page answering %d", status)
	}
	if got := text("#text"); !strings.Contains(got, "acts as you now") || !strings.Contains(got, "your calls only") {
		t.Errorf("the callback page says %q", got)
	}
	b.fits("the callback page", 390)
	b.looksLikeTheConsole("the callback page")
	shot(t, ctx, "authorized-phone")
	if status := submit("back", "main a"); status != http.StatusOK {
		t.Fatalf("back to My credentials answered %d", status)
	}
	if got := text(chromedp.CSS(card)); !strings.Contains(got, "Authorized") || !strings.Contains(got, is.ID) || !strings.Contains(got, "Revoke my authorization") {
		t.Errorf("after authorizing: %q", got)
	}
	b.fits("My credentials, authorized", 390)
	shot(t, ctx, "credentials-authorized-phone")

	out, stderr, err := cliRun(t, bin, "credentials", "list", "--config", cfgPath)
	if err != nil || !strings.Contains(out, id) || !strings.Contains(out, "authorization") {
		t.Fatalf("credentials list: %v\n%s%s", err, out, stderr)
	}
	_, stderr, err = cliRun(t, bin, "credentials", "delete", "tickets", "--for", id, "--config", cfgPath)
	if err != nil || !strings.Contains(stderr, "revoked") || len(is.RevokedTokens()) != 1 {
		t.Fatalf("credentials delete: %v, %d tokens revoked at the authorization server\n%s", err, len(is.RevokedTokens()), stderr)
	}
	do("reload", chromedp.Reload())
	if got := text(chromedp.CSS(card)); !strings.Contains(got, "Not authorized") {
		t.Errorf("after the admin revoked it: %q", got)
	}
}

// serveAViewer starts `mcpgate serve` on cfgPath with a viewer's service
// token made first, named name, and returns its secret, its id and the
// gateway's origin.
func serveAViewer(t *testing.T, bin, cfgPath, name string) (token, id, base string) {
	t.Helper()
	out, stderr, err := cliRun(t, bin, "token", "create", "--config", cfgPath, "--name", name, "--role", "viewer")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, stderr)
	}
	srv := cliStart(t, bin, "serve", "--config", cfgPath)
	base = strings.TrimSuffix(cliMCPURLRE.FindString(strings.Join(srv.waitLine(t, "the MCP URL", cliMCPURLRE.MatchString), "\n")), "/mcp")
	return cliTokenRE.FindString(out), cliTokenIDRE.FindString(stderr), base
}
