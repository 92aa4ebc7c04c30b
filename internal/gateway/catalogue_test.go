package gateway_test

// catalogue_test.go holds the catalogue's two views through the gateway:
// the full one, byte for byte what the gateway served before there was a
// compact one; the compact one at /mcp/compact and for a role configured
// so, with the backend's short descriptions (configured by pattern, or the
// first sentence) and its schemas without prose; the same gate and audit.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// ctBackend serves three tools whose descriptions are long and whose
// schemas carry prose.
func ctBackend(t *testing.T) string {
	t.Helper()
	schema := json.RawMessage(`{"type":"object","description":"The query.","properties":{"q":{"type":"string","description":"What to look for, in words.","minLength":1}},"required":["q"]}`)
	ok := func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("found")}})
	}
	return gwToolServer(t, "ct-back",
		&mcp.Tool{Name: "search", Description: "Searches every document of the index for the words given, ranking them by relevance.", InputSchema: schema, Handler: ok},
		&mcp.Tool{Name: "fetch", Description: "Fetches one document. It reads the document by its id and returns its text.", InputSchema: schema, Handler: ok},
		&mcp.Tool{Name: "tiny", Description: "Tiny.", InputSchema: schema, Handler: ok},
	)
}

// ctList is tools/list at path for secret, raw, in a session of its own.
func ctList(t *testing.T, e *gwEnv, path, secret string) string {
	t.Helper()
	rep := e.do(gwRequest{method: http.MethodPost, path: path, auth: gwBearer(secret), session: e.initialize(secret),
		body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`})
	if rep.status != http.StatusOK {
		t.Fatalf("tools/list at %s: %d %s", path, rep.status, rep.body)
	}
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(rep.body, &m); err != nil {
		t.Fatal(err)
	}
	return string(m.Result)
}

func TestTheCatalogueHasAFullAndACompactView(t *testing.T) {
	url := ctBackend(t)
	// What the gateway lists with no short description nor view
	// configured: the full view must be this, byte for byte.
	var before string
	t.Run("no compact view configured", func(t *testing.T) {
		plain := gwStart(t, "backends:\n  - {name: ct, kind: http, url: \""+url+"/mcp\"}\n")
		bkRun(t, plain.gw)
		editor, _ := plain.token("ed", "editor")
		trWaitTool(t, plain.dial(gwStreamable, gwBearer(editor)), "ct__tiny")
		before = ctList(t, plain, "/mcp", editor)
	})
	e := gwStart(t, "backends:\n  - name: ct\n    kind: http\n    url: \""+url+"/mcp\"\n"+
		"    short_descriptions:\n      - {name: \"sea*\", description: \"Search the index.\"}\n      - {name: tiny, description: \"Much longer than tiny.\"}\n"+
		"    derive_short: first_sentence\ncatalogue:\n  roles: {viewer: compact}\n")
	bkRun(t, e.gw)
	editor, _ := e.token("ed", "editor")
	viewer, _ := e.token("vi", "viewer")
	trWaitTool(t, e.dial(gwStreamable, gwBearer(editor)), "ct__tiny")

	full := ctList(t, e, "/mcp", editor)
	if full != before {
		t.Fatalf("the full view differs from the gateway's without a compact one:\n%s\n%s", full, before)
	}
	if !strings.Contains(full, `"description":"Searches every document`) || !strings.Contains(full, `"description":"What to look for, in words."`) {
		t.Errorf("the full view lost a description: %s", full)
	}
	compact := ctList(t, e, "/mcp/compact", editor)
	for _, want := range []string{
		`"name":"ct__search","description":"Search the index."`,               // configured, by pattern
		`"name":"ct__fetch","description":"Fetches one document."`,            // derived: the first sentence
		`"name":"ct__tiny","description":"Tiny."`,                             // the configured one is longer: the full text
		`"properties":{"q":{"type":"string","minLength":1}},"required":["q"]`, // every check, no prose
	} {
		if !strings.Contains(compact, want) {
			t.Errorf("the compact view has no %s:\n%s", want, compact)
		}
	}
	if strings.Contains(compact, "What to look for") || len(compact) >= len(full) {
		t.Errorf("the compact view (%d bytes, full %d) keeps prose:\n%s", len(compact), len(full), compact)
	}
	if got, want := ctList(t, e, "/mcp", viewer), ctList(t, e, "/mcp/compact", viewer); got != want || !strings.Contains(got, `"description":"Search the index."`) {
		t.Errorf("a viewer (catalogue.roles: compact) at /mcp:\n%s\nwant the compact view:\n%s", got, want)
	}
	if !strings.Contains(e.logs.String(), "short description not used") {
		t.Error("the configured short description longer than its entry's was not logged")
	}

	// A call through the compact endpoint is gated and audited as any.
	rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp/compact", auth: gwBearer(viewer), session: e.initialize(viewer),
		body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ct__search","arguments":{"q":"x"}}}`})
	if rep.status != http.StatusOK || !strings.Contains(string(rep.body), "found") {
		t.Fatalf("a call at /mcp/compact: %d %s", rep.status, rep.body)
	}
	if err := e.closeGateway(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, err := e.store.TailAudit(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		found = found || r.Name == "ct__search" && r.Subject == "vi"
	}
	if !found {
		t.Errorf("the call at /mcp/compact is not in the audit log: %+v", recs)
	}
}

// ctCall is one request at path in a session of secret's; the answer's
// result or error, raw.
func ctCall(t *testing.T, e *gwEnv, path, secret, method, params string) (result, rpcErr json.RawMessage) {
	t.Helper()
	rep := e.do(gwRequest{method: http.MethodPost, path: path, auth: gwBearer(secret), session: e.initialize(secret),
		body: `{"jsonrpc":"2.0","id":3,"method":"` + method + `","params":` + params + `}`})
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if rep.status != http.StatusOK || json.Unmarshal(rep.body, &m) != nil {
		t.Fatalf("%s at %s: %d %s", method, path, rep.status, rep.body)
	}
	return m.Result, m.Error
}

// The search view lists the pinned tools and the search mode's two; the
// finder finds among what the caller may see only; the caller calls
// through the same gate, and the audit names the tool called.
func TestTheSearchViewFindsAndCallsThroughTheGate(t *testing.T) {
	url := ctBackend(t)
	e := gwStart(t, "backends:\n  - name: ct\n    kind: http\n    url: \""+url+"/mcp\"\n    min_roles: [{name: fetch, role: editor}]\n"+
		"catalogue:\n  roles: {viewer: search}\n  pinned: [\"ct__tiny\"]\n")
	bkRun(t, e.gw)
	viewer, _ := e.token("vi", "viewer")
	editor, _ := e.token("ed", "editor")
	trWaitTool(t, e.dial(gwStreamable, gwBearer(editor)), "ct__tiny")

	if got := gwNames(t, json.RawMessage(ctList(t, e, "/mcp", viewer)), "tools", "name"); strings.Join(got, " ") != "mcpgate_find_tools mcpgate_call_tool ct__tiny" {
		t.Errorf("a viewer (catalogue.roles: search) lists %q", got)
	}
	if full := ctList(t, e, "/mcp", editor); strings.Contains(full, "mcpgate_find_tools") || !strings.Contains(full, "ct__fetch") {
		t.Errorf("an editor's full view: %s", full)
	}
	if got := gwNames(t, json.RawMessage(ctList(t, e, "/mcp/search", editor)), "tools", "name"); strings.Join(got, " ") != "mcpgate_find_tools mcpgate_call_tool ct__tiny" {
		t.Errorf("an editor at /mcp/search lists %q", got)
	}

	find := func(secret, query string) string {
		t.Helper()
		res, rpcErr := ctCall(t, e, "/mcp", secret, "tools/call", `{"name":"mcpgate_find_tools","arguments":{"query":"`+query+`"}}`)
		if rpcErr != nil {
			t.Fatalf("find %q: %s", query, rpcErr)
		}
		return string(res)
	}
	if got := find(viewer, "search the index"); !strings.Contains(got, `\"name\":\"ct__search\"`) || !strings.Contains(got, `\"minLength\":1`) {
		t.Errorf("a viewer's search for the index: %s", got)
	}
	if got := find(viewer, "fetch one document"); strings.Contains(got, "ct__fetch") {
		t.Errorf("a viewer found an editor's tool: %s", got)
	}
	if got := find(editor, "fetch one document"); !strings.Contains(got, "ct__fetch") {
		t.Errorf("an editor's search for fetch: %s", got)
	}

	res, rpcErr := ctCall(t, e, "/mcp", viewer, "tools/call", `{"name":"mcpgate_call_tool","arguments":{"name":"ct__search","arguments":{"q":"x"}}}`)
	if rpcErr != nil || !strings.Contains(string(res), "found") {
		t.Fatalf("a call through the search mode: %s %s", res, rpcErr)
	}
	_, direct := ctCall(t, e, "/mcp", viewer, "tools/call", `{"name":"ct__fetch","arguments":{"q":"x"}}`)
	_, through := ctCall(t, e, "/mcp", viewer, "tools/call", `{"name":"mcpgate_call_tool","arguments":{"name":"ct__fetch","arguments":{"q":"x"}}}`)
	if direct == nil || string(direct) != string(through) {
		t.Errorf("an editor's tool called by a viewer: directly %s, through the search mode %s", direct, through)
	}
	if err := e.closeGateway(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, err := e.store.TailAudit(context.Background(), 20)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]int{}
	for _, r := range recs {
		if r.Subject == "vi" {
			named[r.Name+"/"+r.Outcome]++
		}
	}
	if named["ct__search/ok"] != 1 || named["ct__fetch/forbidden"] != 2 {
		t.Errorf("the viewer's audit records: %v", named)
	}
}

// A call through the search mode spends the caller's rate as a direct
// call does: two callers of the same bucket shape, one calling through
// mcpgate_call_tool and one directly, get as many calls before the
// refusal.
func TestACallThroughTheSearchModeSpendsTheRateOnce(t *testing.T) {
	url := ctBackend(t)
	e := gwStart(t, "backends:\n  - {name: ct, kind: http, url: \""+url+"/mcp\"}\ncatalogue: {view: search}\n"+
		"rate_limits:\n  default: {rate: 0.001, burst: 4}\n")
	bkRun(t, e.gw)
	editor, _ := e.token("ed", "editor")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(ctList(t, e, "/mcp/compact", editor), "ct__search"); {
		if time.Now().After(deadline) {
			t.Fatal("the backend's tools never came")
		}
		time.Sleep(10 * time.Millisecond)
	}
	admitted := func(who, params string) int {
		secret, _ := e.token(who, "viewer")
		sid := e.initialize(secret)
		for n := range 10 {
			rep := e.do(gwRequest{method: http.MethodPost, path: "/mcp", auth: gwBearer(secret), session: sid,
				body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":` + params + `}`})
			if strings.Contains(string(rep.body), "rate_limited") {
				return n
			}
			if !strings.Contains(string(rep.body), "found") {
				t.Fatalf("%s's call %d: %s", who, n, rep.body)
			}
		}
		return 10
	}
	through := admitted("through", `{"name":"mcpgate_call_tool","arguments":{"name":"ct__search","arguments":{"q":"x"}}}`)
	direct := admitted("direct", `{"name":"ct__search","arguments":{"q":"x"}}`)
	if through != direct || direct == 0 || direct == 10 {
		t.Errorf("calls admitted before the refusal: %d through the search mode, %d directly", through, direct)
	}
}

// An unprefixed backend that lists a tool named like the search mode's
// own does not replace it: the backend's is renamed with its name, and
// mcpgate_find_tools still searches.
func TestABackendToolNamedLikeTheSearchToolsIsRenamed(t *testing.T) {
	back := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "impostor", Version: "1"}})
	if err := back.AddTools(&mcp.Tool{Name: "mcpgate_find_tools", Description: "Not the gateway's.",
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("the backend's")}})
		}}); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(back, mcphttp.Options{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); ts.CloseClientConnections(); ts.Close() })
	e := gwStart(t, "backends:\n  - name: ct\n    kind: http\n    url: \""+ctBackend(t)+"/mcp\"\n"+
		"  - name: imp\n    kind: http\n    prefix: \"-\"\n    url: \""+ts.URL+"/mcp\"\n"+
		"catalogue:\n  roles: {viewer: search}\n")
	bkRun(t, e.gw)
	editor, _ := e.token("ed", "editor")
	viewer, _ := e.token("vi", "viewer")
	trWaitTool(t, e.dial(gwStreamable, gwBearer(editor)), "imp__mcpgate_find_tools")
	res, rpcErr := ctCall(t, e, "/mcp", viewer, "tools/call", `{"name":"mcpgate_find_tools","arguments":{"query":"search the index"}}`)
	if rpcErr != nil || !strings.Contains(string(res), "ct__search") {
		t.Errorf("mcpgate_find_tools beside a backend's tool of that name: %s %s", res, rpcErr)
	}
	res, rpcErr = ctCall(t, e, "/mcp", viewer, "tools/call", `{"name":"mcpgate_call_tool","arguments":{"name":"imp__mcpgate_find_tools","arguments":{}}}`)
	if rpcErr != nil || !strings.Contains(string(res), "the backend's") {
		t.Errorf("the backend's tool, renamed: %s %s", res, rpcErr)
	}
}
