//go:build unix

// cors_browser_test.go connects to the gateway from a page on another
// origin in a real headless Chromium, as a browser-based MCP client (the
// Inspector's web UI, say) does: only the browser enforces CORS, so only
// a browser can show that the gateway's answers let such a page work.

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// corsClientScript is what a browser-based client does first, with the
// service token it was given: discovery (the protected resource's metadata
// and its authorization server's, and a registration, whose JSON body
// takes a preflight), an unauthenticated request whose 401 it must read
// (WWW-Authenticate), and an MCP session (initialize with the headers
// that take a preflight, the session id read from the answer, tools/list
// in the session).
const corsClientScript = `(async (gw, token) => {
  const out = {};
  const prm = await (await fetch(gw + "/.well-known/oauth-protected-resource/mcp")).json();
  out.resource = prm.resource;
  const as = await (await fetch(prm.authorization_servers[0] + "/.well-known/oauth-authorization-server")).json();
  const reg = await fetch(as.registration_endpoint, {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({client_name: "a page", redirect_uris: [location.origin + "/cb"], token_endpoint_auth_method: "none"})});
  out.registered = reg.status;
  const anon = await fetch(gw + "/mcp", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"});
  out.anonymous = anon.status;
  out.challenge = anon.headers.get("WWW-Authenticate") || "";
  const rpc = async (session, body) => {
    const h = {"Authorization": "Bearer " + token, "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"};
    if (session) h["Mcp-Session-Id"] = session;
    const r = await fetch(gw + "/mcp", {method: "POST", headers: h, body: JSON.stringify(body)});
    let text = await r.text();
    if ((r.headers.get("Content-Type") || "").includes("event-stream")) {
      text = text.split("\n").filter(l => l.startsWith("data:")).map(l => l.slice(5)).pop() || "";
    }
    return {status: r.status, session: r.headers.get("Mcp-Session-Id") || "", body: text};
  };
  const init = await rpc("", {jsonrpc: "2.0", id: 1, method: "initialize",
    params: {protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "page", version: "1"}}});
  out.session = init.session;
  await rpc(init.session, {jsonrpc: "2.0", method: "notifications/initialized"});
  const list = await rpc(init.session, {jsonrpc: "2.0", id: 2, method: "tools/list"});
  out.list = list.status + " " + list.body;
  return out;
})`

// TestAPageOnAnotherOriginConnects: a page on another loopback port
// discovers the gateway's authorization server, registers a client, reads
// the 401's challenge and holds an MCP session, all from the page.
func TestAPageOnAnotherOriginConnects(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	ctx := browser(t)
	bin := testkit.Mcpgate(t)
	b := startBuiltinServe(t, bin, "editor")
	gw := "http://" + b.addr
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "<!doctype html><title>a browser-based client</title><p>client</p>")
	}))
	t.Cleanup(page.Close)
	var got struct {
		Resource   string `json:"resource"`
		Registered int    `json:"registered"`
		Anonymous  int    `json:"anonymous"`
		Challenge  string `json:"challenge"`
		Session    string `json:"session"`
		List       string `json:"list"`
	}
	args, _ := json.Marshal([]string{gw, b.secret})
	script := corsClientScript + `(...` + string(args) + `)`
	if err := chromedp.Do(ctx, chromedp.Navigate(page.URL)); err != nil {
		t.Fatal(err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the page's client, from %s to %s: %v", page.URL, gw, err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Resource != gw+"/mcp" || got.Registered != 201 {
		t.Errorf("discovery and registration from the page: %+v", got)
	}
	if got.Anonymous != 401 || !strings.Contains(got.Challenge, "resource_metadata=") {
		t.Errorf("the page reads a 401 as %d with WWW-Authenticate %q", got.Anonymous, got.Challenge)
	}
	if got.Session == "" || !strings.HasPrefix(got.List, `200 {"jsonrpc":"2.0","id":2,"result":{"tools":[`) {
		t.Errorf("the page's MCP session: %q, tools/list %.300s", got.Session, got.List)
	}
}
