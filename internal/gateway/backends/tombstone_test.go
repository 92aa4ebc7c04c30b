// tombstone_test.go pins what a call to a backend that is down gets from a
// front that consults the shared ledger, as the gateway's does: -32603
// with data.backend while the backend is down, an unknown-tool answer once
// the backend is removed from the Set.

package backends_test

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestACallToADownBackendNamesItUntilItIsRemoved(t *testing.T) {
	claims := catalogue.NewClaims()
	f := &front{Server: mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "front", Version: "1"}, Unknown: claims.Unknown}),
		out: &mcptest.Recorder{}}
	f.ss = f.NewSession(mcp.SessionOptions{ID: "front", Out: f.out})
	t.Cleanup(f.ss.Close)
	f.call(t, "initialize", `{"protocolVersion":"`+mcp.LatestVersion+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)

	srv := serveFixture(t, "")
	opts := fast
	opts.Claims = claims
	set := backends.NewSet(f.Server, opts)
	if err := set.Add(backends.Spec{Name: "web", Kind: upstream.KindHTTP, URL: srv.ts.URL + "/mcp"}); err != nil {
		t.Fatal(err)
	}
	run(t, set)
	waitState(t, set.Backend("web"), "up", isUp)
	f.callText(t, "web__test_simple_text")

	srv.stop()
	waitState(t, set.Backend("web"), "down", isDown)
	if f.has(t, "web__test_simple_text") {
		t.Error("a dead backend's tool is still listed")
	}
	m := f.call(t, "tools/call", `{"name":"web__test_simple_text","arguments":{}}`)
	e, err := m.ErrorObject()
	if err != nil || e == nil || e.Code != jsonrpc.CodeInternalError {
		t.Fatalf("call to a down backend: %s %s, want -32603", m.Result, m.Error)
	}
	if b, _ := jsonrpc.LookupString(e.Data, "backend"); b != "web" {
		t.Errorf("call to a down backend: data %s, want backend web", e.Data)
	}

	set.Remove("web")
	m = f.call(t, "tools/call", `{"name":"web__test_simple_text","arguments":{}}`)
	if e, err := m.ErrorObject(); err != nil || e == nil || e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("call to a removed backend: %s %s, want -32602 (unknown tool)", m.Result, m.Error)
	}
}
