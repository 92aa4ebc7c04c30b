//go:build unix

// signin_browser_test.go signs a person in on the built-in authorization
// server's page in a real headless Chromium: what a browser does with the
// page's headers (its Content-Security-Policy, its Referrer-Policy) is
// what this shows, and no HTTP-driven test can.

package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// TestTheSignInPageInABrowser: a person signs in on the built-in server's
// page in a real headless Chromium — types their service token, allows —
// and the browser lands on the client's redirect URI with the code (the
// page's Content-Security-Policy lets its form's redirect go there).
func TestTheSignInPageInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	ctx := browser(t)
	bin := testkit.Mcpgate(t)
	b := startBuiltinServe(t, bin, "editor")
	base := "http://" + b.addr
	codes := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case codes <- r.URL.Query():
		default:
		}
		_, _ = io.WriteString(w, "<!doctype html><title>client</title><p id=done>back at the client</p>")
	}))
	t.Cleanup(cb.Close)
	_, q := builtinClientRequest(t, base, cb.URL+"/cb", "editor")
	q.Set("state", "in-the-browser")
	// On a phone's width, with the console's look (package look).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/oauth/authorize?"+q.Encode()), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), b.secret)); err != nil {
		t.Fatalf("the sign-in page: %v", err)
	}
	page := tab{t, ctx}
	page.fits("the sign-in page", 390)
	page.looksLikeTheConsole("the sign-in page")
	if ask := page.text("#ask"); !strings.Contains(ask, "asks to use this gateway as you") || !strings.Contains(ask, "editor") {
		t.Errorf("the page does not say what is granted to whom: %q", ask)
	}
	shot(t, ctx, "sign-in")
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wait, chromedp.Click(chromedp.ID("allow")), chromedp.WaitVisible(chromedp.ID("done"))); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		shot(t, ctx, "after-allow")
		t.Fatalf("allow, and back at the client: %v; the browser is at %s:\n%.2000s", err, loc, body)
	}
	got := <-codes
	if got.Get("code") == "" || got.Get("state") != "in-the-browser" || got.Get("iss") != base {
		t.Errorf("the client was sent %v", got)
	}
}
