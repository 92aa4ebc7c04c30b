// tombstones_test.go pins the ledger's memory of a backend that is down:
// after Down, its entries are out of the lists but calls naming them —
// tool, prompt, resource, and a URI its template matched — answer -32603
// with data.backend, with the MinRole the entry had; a new Sync brings the
// live entries back and clears the stones; Unsync or Forget clears them
// (the names are unknown again); and OwnerOf names the down backend.

package catalogue_test

import (
	"context"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// frontWithClaims is newFront whose server consults claims about names it
// does not hold, as the gateway's does.
func frontWithClaims(t *testing.T, claims *catalogue.Claims) *front {
	t.Helper()
	f := &front{Server: mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "front", Version: "1"}, Unknown: claims.Unknown}),
		out: &mcptest.Recorder{}}
	f.ss = f.NewSession(mcp.SessionOptions{ID: "front", Out: f.out})
	t.Cleanup(f.ss.Close)
	f.result(t, "initialize", `{"protocolVersion":"`+mcp.LatestVersion+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	return f
}

var tombCalls = [][2]string{
	{"tools/call", `{"name":"b1__echo","arguments":{}}`},
	{"prompts/get", `{"name":"b1__greet","arguments":{"who":"x"}}`},
	{"resources/read", `{"uri":"mem://a"}`},
	{"resources/read", `{"uri":"mem://items/7"}`}, // through the dead template
}

func TestTombstonesOfADownBackend(t *testing.T) {
	claims := catalogue.NewClaims()
	f := frontWithClaims(t, claims)
	bs := newBackendServer(t, "b1", 0)
	b := catalogue.New("b1", connect(t, bs.Server), catalogue.Options{Claims: claims,
		MinRoleFor: func(kind, name string) string { return kind + ":" + name }})
	must(t, b.Sync(context.Background(), f.Server))

	b.Down(f.Server)
	if tools := names(f.list(t, "tools/list", "tools"), "name"); len(tools) != 0 {
		t.Fatalf("tools/list after Down: %v", tools)
	}
	for _, c := range tombCalls {
		e := f.call(t, c[0], c[1])
		je, err := e.ErrorObject()
		if err != nil || je == nil {
			t.Fatalf("%s %s after Down: %s %s", c[0], c[1], e.Result, e.Error)
		}
		if got, _ := jsonrpc.LookupString(je.Data, "backend"); je.Code != jsonrpc.CodeInternalError || got != "b1" {
			t.Errorf("%s %s after Down: %s, want -32603 with data.backend b1", c[0], c[1], e.Error)
		}
	}
	// The stones keep the entry as the gate saw it.
	if e, err := claims.Unknown(mcp.KindResource, "mem://items/7"); err == nil ||
		e != (mcp.Entry{Kind: mcp.KindResource, Name: "mem://items/{id}", MinRole: "resource:mem://items/{id}", Owner: "b1"}) {
		t.Errorf("Unknown(resource mem://items/7) = %+v, %v", e, err)
	}
	if e, _ := claims.Unknown(mcp.KindTool, "b1__echo"); e.MinRole != "tool:echo" {
		t.Errorf("Unknown(tool b1__echo) = %+v, want the MinRole of the backend's own name", e)
	}
	if e := f.call(t, "tools/call", `{"name":"b1__never","arguments":{}}`); e.Error == nil || !jsonCode(e, jsonrpc.CodeInvalidParams) {
		t.Errorf("a name never listed after Down: %s, want -32602", e.Error)
	}

	// Back up: live entries answer, the stones are gone.
	must(t, b.Sync(context.Background(), f.Server))
	f.result(t, "tools/call", `{"name":"b1__echo","arguments":{}}`)
	<-bs.args
	<-bs.metas
	if _, err := claims.Unknown(mcp.KindTool, "b1__echo"); err != nil {
		t.Errorf("a stone outlived the backend's return: %v", err)
	}

	// Gone for good (Unsync), or forgotten while down: unknown names.
	for _, end := range []struct {
		name string
		do   func()
	}{
		{"Unsync", func() { b.Unsync(f.Server) }},
		{"Forget", func() { claims.Forget("b1") }},
	} {
		must(t, b.Sync(context.Background(), f.Server))
		b.Down(f.Server)
		end.do()
		want := map[string]int64{"tools/call": jsonrpc.CodeInvalidParams, "prompts/get": jsonrpc.CodeInvalidParams, "resources/read": jsonrpc.CodeResourceNotFound}
		for _, c := range tombCalls {
			if e := f.call(t, c[0], c[1]); !jsonCode(e, want[c[0]]) {
				t.Errorf("after Down and %s: %s %s answered %s, want %d", end.name, c[0], c[1], e.Error, want[c[0]])
			}
		}
	}
}

func jsonCode(m *jsonrpc.Message, code int64) bool {
	e, err := m.ErrorObject()
	return err == nil && e != nil && e.Code == code
}
