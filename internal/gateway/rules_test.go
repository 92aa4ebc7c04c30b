// rules_test.go: the policy's rules in CEL (issue 30, part 1) decide
// calls to a relayed backend, in both eras, after the role and before the
// rate limit, and hide what they deny whatever the arguments.

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// prFiles is a backend with read(path), which answers the path, and
// restart_service.
func prFiles(t *testing.T) string {
	t.Helper()
	read := func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
		var a struct{ Path string }
		_ = json.Unmarshal(args, &a)
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(a.Path)}})
	}
	restart := func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("restarted")}})
	}
	return gwToolServer(t, "files", &mcp.Tool{Name: "read", Description: "Reads a file.", Handler: read},
		&mcp.Tool{Name: "restart_service", Description: "Restarts it.", Handler: restart})
}

// prConnect is a client of era for secret, once files__read is listed.
func prConnect(t *testing.T, e *gwEnv, secret string, era mcp.Era) *mcp.Client {
	t.Helper()
	c := pvConnect(t, e.base, gwBearer(secret), era)
	testkit.WaitFor(t, "files__read listed", func() bool {
		res, err := c.Call(testkit.Context(t), "tools/list", nil)
		return err == nil && strings.Contains(string(res), `"files__read"`)
	})
	return c
}

const prRules = "policy:\n  rules:\n" +
	"    - {name: docs-only-for-viewers, match: 'request.backend == \"files\" && request.origin == \"read\" && principal.role == \"viewer\"',\n" +
	"       deny_unless: 'request.arguments.path.startsWith(\"/srv/docs/\")', message: \"Viewers may read only under /srv/docs.\"}\n" +
	"    - {name: admins-restart, match: 'request.origin == \"restart_service\"', deny_unless: 'principal.role == \"admin\"'}\n"

// prStart starts a gateway with extra configuration, the files backend
// (synced) and the rules, and makes a viewer's and an admin's tokens.
func prStart(t *testing.T, extra string) (e *gwEnv, backend, viewer, admin string) {
	t.Helper()
	backend = "backends:\n  - {name: files, kind: http, url: " + strconv.Quote(prFiles(t)) + "}\n"
	e = gwStart(t, "listen: 127.0.0.1:0\n"+extra+backend+prRules)
	bkRun(t, e.gw)
	viewer, _ = e.token("vic", "viewer")
	admin, _ = e.token("ada", "admin")
	return e, backend, viewer, admin
}

// A rule reads the arguments a backend reads. Arguments with two keys
// that a case-insensitive decoder (the Go backend here, as many are)
// takes for one, or one key twice, could show the rule one path and the
// backend another: the rule denies them, and the backend is not called.
// An admin, whom the rule does not match, is not refused for them.
func TestAPolicyRuleDeniesArgumentsThatReadersCouldReadApart(t *testing.T) {
	e, _, viewer, admin := prStart(t, "")
	ctx := testkit.Context(t)
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraSessionless} {
		c := prConnect(t, e, viewer, era)
		for _, args := range []string{
			`{"path":"/srv/docs/a.md","PATH":"/etc/passwd"}`,
			`{"path":"/srv/docs/a.md","Path":"/etc/passwd"}`,
			`{"path":"/etc/passwd","path":"/srv/docs/a.md"}`,
			`{"path":"/srv/docs/a.md","opts":{"x":1,"X":2}}`,
		} {
			res, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"files__read","arguments":`+args+`}`))
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeForbidden || !strings.Contains(string(je.Data), `"rule":"docs-only-for-viewers"`) {
				t.Errorf("era %v: arguments %s answered %s %v, want the rule's -32001", era, args, res, err)
			}
		}
	}
	a := prConnect(t, e, admin, mcp.EraSession)
	res, err := a.Call(ctx, "tools/call", json.RawMessage(`{"name":"files__read","arguments":{"path":"/srv/docs/a.md","PATH":"/srv/docs/b.md"}}`))
	if err != nil || pvText(t, res) != "/srv/docs/b.md" {
		t.Errorf("an admin's call with twin keys: %s %v, want the backend's answer", res, err)
	}
}

// A viewer, in either era, reads under /srv/docs and is refused
// elsewhere, -32001 with the rule's message and its name in the data; the
// refusals spend none of their rate budget (a burst of 2: the two reads
// after three refusals pass) and are audited with the rule's name. The
// restart, denied to anyone but an admin whatever its arguments, is not
// listed to a viewer; an admin lists and calls it. A reload without the
// rules lets the viewer read anywhere.
func TestPolicyRulesDecideCallsAfterTheRoleAndBeforeTheRate(t *testing.T) {
	e, backend, viewer, admin := prStart(t, "rate_limits: {default: {rate: 0.001, burst: 2}}\n")
	ctx := testkit.Context(t)
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraSessionless} {
		c := pvConnect(t, e.base, gwBearer(viewer), era)
		testkit.WaitFor(t, "files__read listed", func() bool {
			res, err := c.Call(ctx, "tools/list", nil)
			return err == nil && strings.Contains(string(res), `"files__read"`)
		})
		if res, _ := c.Call(ctx, "tools/list", nil); strings.Contains(string(res), "restart_service") {
			t.Errorf("era %v: the restart is listed to a viewer", era)
		}
		for range 3 {
			_, err := gwCallTool(ctx, c, "files__read", map[string]any{"path": "/etc/passwd"})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeForbidden || je.Message != "Viewers may read only under /srv/docs." ||
				!strings.Contains(string(je.Data), `"rule":"docs-only-for-viewers"`) {
				t.Fatalf("era %v: a read outside /srv/docs: %v %s", era, err, je.Data)
			}
		}
		if _, err := gwCallTool(ctx, c, "files__restart_service", nil); err == nil {
			t.Errorf("era %v: a viewer restarted the service", era)
		}
	}
	// The budget is one per token, both eras alike: the refusals above
	// spent none of its two.
	c := pvConnect(t, e.base, gwBearer(viewer), mcp.EraSession)
	for i := range 2 {
		res, err := gwCallTool(ctx, c, "files__read", map[string]any{"path": "/srv/docs/a.md"})
		if err != nil || pvText(t, res) != "/srv/docs/a.md" {
			t.Fatalf("read %d under /srv/docs: %s %v (the refusals spent the rate budget?)", i, res, err)
		}
	}
	a := pvConnect(t, e.base, gwBearer(admin), mcp.EraSessionless)
	if res, _ := a.Call(ctx, "tools/list", nil); !strings.Contains(string(res), "files__restart_service") {
		t.Error("the restart is not listed to an admin")
	}
	if res, err := gwCallTool(ctx, a, "files__restart_service", nil); err != nil || pvText(t, res) != "restarted" {
		t.Errorf("an admin's restart: %s %v", res, err)
	}
	// The console's Policy page shows each rule, its counts and its
	// latest refusals (once the audit has them).
	cookie := adminLogin(t, e, admin)
	testkit.WaitFor(t, "the policy page with the refusals", func() bool {
		_, page := adminDo(t, e, "GET", "/admin/policy", nil, map[string]string{"Cookie": cookie})
		return strings.Contains(page, `data-rule="docs-only-for-viewers"`) && strings.Contains(page, "<strong>6 denied</strong>") &&
			strings.Contains(page, "2 passed") && strings.Count(page, "<td>vic</td>") >= 7
	})

	cfg, err := config.Parse([]byte("listen: 127.0.0.1:0\nrate_limits: {default: {rate: 0.001, burst: 2}}\n" + backend))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = e.cfg.Store
	rep, err := e.gw.Reload(ctx, cfg)
	if err != nil || !rep.Policy {
		t.Fatalf("reload without the rules: %+v %v", rep, err)
	}
	if _, err := gwCallTool(ctx, pvConnect(t, e.base, gwBearer(admin), mcp.EraSession), "files__read", map[string]any{"path": "/etc/passwd"}); err != nil {
		t.Errorf("a read anywhere once the rules are gone: %v", err)
	}

	by := gwAudited(t, e, func(r store.AuditRecord) string { return r.Subject + " " + r.Outcome + " " + r.Rule })
	if by["vic forbidden docs-only-for-viewers"] != 6 || by["vic forbidden admins-restart"] != 2 || by["vic ok "] != 2 {
		t.Errorf("audited by caller, outcome and rule: %v", by)
	}
}

// Interceptors run inside the gate, on a relayed call: a webhook denies a
// read it matches (-32001, audited with its name), the redactor takes a
// secret out of an answer (audited and counted by pattern), and the
// metrics count each interceptor's outcomes.
func TestInterceptorsCheckAndChangeAdmittedCalls(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "/etc/") {
			_, _ = io.WriteString(w, `{"decision":"deny","message":"Not /etc."}`)
			return
		}
		_, _ = io.WriteString(w, `{"decision":"allow"}`)
	}))
	t.Cleanup(hook.Close)
	e := gwStart(t, "listen: 127.0.0.1:0\nbackends:\n  - {name: files, kind: http, url: "+strconv.Quote(prFiles(t))+"}\n"+
		"interceptors:\n  - {name: dlp, url: "+strconv.Quote(hook.URL)+", on: [request], match: 'request.backend == \"files\"'}\n"+
		"  - {name: secrets, builtin: redact}\n")
	bkRun(t, e.gw)
	ctx := testkit.Context(t)
	viewer, _ := e.token("vic", "viewer")
	admin, _ := e.token("ada", "admin")
	c := prConnect(t, e, viewer, mcp.EraSessionless)
	_, err := gwCallTool(ctx, c, "files__read", map[string]any{"path": "/etc/shadow"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeForbidden || je.Message != "Not /etc." {
		t.Fatalf("a read the hook denies: %v", err)
	}
	res, err := gwCallTool(ctx, c, "files__read", map[string]any{"path": "/srv/AKIAIOSFODNN7EXAMPLE.txt"})
	if err != nil || pvText(t, res) != "/srv/[REDACTED:aws_access_key_id].txt" {
		t.Fatalf("a read whose answer holds a key: %s %v", res, err)
	}
	cookie := adminLogin(t, e, admin)
	testkit.WaitFor(t, "the policy page with the interceptors", func() bool {
		_, page := adminDo(t, e, "GET", "/admin/policy", nil, map[string]string{"Cookie": cookie})
		return strings.Contains(page, `data-interceptor="dlp"`) && strings.Contains(page, "allow 1, deny 1") &&
			strings.Contains(page, `data-interceptor="secrets"`) && strings.Contains(page, "builtin: redact") && strings.Contains(page, "<td>vic</td>")
	})
	rep := mtScrape(e, gwBearer(admin))
	for _, want := range []string{`mcpgate_interceptor_calls_total{interceptor="dlp",outcome="deny"} 1`, `mcpgate_interceptor_calls_total{interceptor="dlp",outcome="allow"} 1`,
		`mcpgate_interceptor_calls_total{interceptor="secrets",outcome="redact"} 1`, `mcpgate_redactions_total{pattern="aws_access_key_id"} 1`} {
		if !strings.Contains(string(rep.body), want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
	by := gwAudited(t, e, func(r store.AuditRecord) string { return r.Outcome + " " + r.Rule + " " + r.Redacted })
	if by["forbidden interceptor:dlp "] != 1 || by["ok  aws_access_key_id=1"] != 1 {
		t.Errorf("audited by outcome, rule and redactions: %v", by)
	}
}

// Each mode and each failure of a real HTTP hook, on relayed calls: a
// hook allows, denies, gives the arguments the backend gets, gives the
// result the caller gets; a hook too slow, unreachable or answering
// nonsense lets the call go on or refuses it as its fail says.
func TestEveryHookModeAndFailureThroughTheGateway(t *testing.T) {
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var doc struct{ Phase string }
		_ = json.NewDecoder(r.Body).Decode(&doc)
		switch r.URL.Path {
		case "/deny":
			_, _ = io.WriteString(w, `{"decision":"deny","message":"No."}`)
		case "/mutate-args":
			_, _ = io.WriteString(w, `{"decision":"allow","arguments":{"path":"/rewritten"}}`)
		case "/mutate-result":
			_, _ = io.WriteString(w, `{"decision":"allow","result":{"content":[{"type":"text","text":"replaced"}]}}`)
		case "/slow":
			<-r.Context().Done() // answers only once the gateway has given up
		case "/nonsense":
			_, _ = io.WriteString(w, `{"verdict":"fine"}`)
		default:
			_, _ = io.WriteString(w, `{"decision":"allow"}`)
		}
	}))
	t.Cleanup(hooks.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	gone := closed.URL
	closed.Close()
	cases := []struct {
		name, url, extra string
		want             string // the text answered; "" for a -32001
	}{
		{"allow", hooks.URL + "/allow", "", "/srv/a"},
		{"deny", hooks.URL + "/deny", "", ""},
		{"mutate-args", hooks.URL + "/mutate-args", "mode: mutate, on: [request]", "/rewritten"},
		{"mutate-result", hooks.URL + "/mutate-result", "mode: mutate, on: [response]", "replaced"},
		{"slow-open", hooks.URL + "/slow", "timeout: 50ms, fail: open", "/srv/a"},
		{"slow-closed", hooks.URL + "/slow", "timeout: 50ms", ""},
		{"gone-open", gone, "fail: open", "/srv/a"},
		{"gone-closed", gone, "", ""},
		{"nonsense-open", hooks.URL + "/nonsense", "fail: open", "/srv/a"},
		{"nonsense-closed", hooks.URL + "/nonsense", "fail: closed", ""},
	}
	yaml := "listen: 127.0.0.1:0\nbackends:\n  - {name: files, kind: http, url: " + strconv.Quote(prFiles(t)) + "}\ninterceptors:\n"
	for _, c := range cases {
		yaml += fmt.Sprintf("  - {name: %s, url: %q, match: 'request.arguments.case == %q'", c.name, c.url, c.name)
		if c.extra != "" {
			yaml += ", " + c.extra
		}
		yaml += "}\n"
	}
	e := gwStart(t, yaml)
	bkRun(t, e.gw)
	ctx := testkit.Context(t)
	editor, _ := e.token("ed", "editor")
	c := prConnect(t, e, editor, mcp.EraSession)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := gwCallTool(ctx, c, "files__read", map[string]any{"path": "/srv/a", "case": tc.name})
			if tc.want != "" {
				if err != nil || pvText(t, res) != tc.want {
					t.Errorf("%s %v, want %q", res, err, tc.want)
				}
				return
			}
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeForbidden || !strings.Contains(string(je.Data), `"interceptor":"`+tc.name+`"`) {
				t.Errorf("%v, want -32001 by %s", err, tc.name)
			}
		})
	}
	// The audit names what each interceptor came to: the refusals by
	// their interceptor, the changes and the failures that let the call
	// go on beside the outcome.
	by := gwAudited(t, e, func(r store.AuditRecord) string { return r.Outcome + " " + r.Rule + " " + r.Hooks })
	for _, want := range []string{"forbidden interceptor:deny ", "ok  mutate-args:mutate", "ok  mutate-result:mutate",
		"ok  slow-open:error_open slow-open:error_open", "ok  gone-open:error_open gone-open:error_open", "forbidden interceptor:slow-closed ",
		"forbidden interceptor:gone-closed ", "ok  nonsense-open:error_open nonsense-open:error_open", "forbidden interceptor:nonsense-closed "} {
		if by[want] != 1 {
			t.Errorf("audited %q %d times, want once; all: %v", want, by[want], by)
		}
	}
}

// An interceptor may be a tool of an MCP server: called with the call's
// document, it answers in its structured content (allow or deny), or in
// JSON text. A reload without the interceptors lets what they denied go on.
func TestAnMCPServersToolIsAnInterceptor(t *testing.T) {
	check := func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
		var doc struct {
			Params struct{ Arguments struct{ Path string } }
		}
		_ = json.Unmarshal(args, &doc)
		if strings.HasPrefix(doc.Params.Arguments.Path, "/etc/") {
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(`{"decision":"deny","message":"Checked: not /etc."}`)}})
		}
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("allowed")}, StructuredContent: json.RawMessage(`{"decision":"allow"}`)})
	}
	checker := gwToolServer(t, "checker", &mcp.Tool{Name: "check", Description: "Checks a call.", Handler: check})
	backend := "backends:\n  - {name: files, kind: http, url: " + strconv.Quote(prFiles(t)) + "}\n"
	e := gwStart(t, "listen: 127.0.0.1:0\n"+backend+"interceptors:\n  - {name: checker, url: "+strconv.Quote(checker)+", tool: check, on: [request]}\n")
	bkRun(t, e.gw)
	ctx := testkit.Context(t)
	editor, _ := e.token("ed", "editor")
	c := prConnect(t, e, editor, mcp.EraSession)
	if res, err := gwCallTool(ctx, c, "files__read", map[string]any{"path": "/srv/a"}); err != nil || pvText(t, res) != "/srv/a" {
		t.Fatalf("a read the tool allows: %s %v", res, err)
	}
	_, err := gwCallTool(ctx, c, "files__read", map[string]any{"path": "/etc/shadow"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeForbidden || je.Message != "Checked: not /etc." {
		t.Fatalf("a read the tool denies: %v", err)
	}
	cfg, err := config.Parse([]byte("listen: 127.0.0.1:0\n" + backend))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = e.cfg.Store
	if rep, err := e.gw.Reload(ctx, cfg); err != nil || !rep.Policy {
		t.Fatalf("reload without the interceptors: %+v %v", rep, err)
	}
	if _, err := gwCallTool(ctx, c, "files__read", map[string]any{"path": "/etc/shadow"}); err != nil {
		t.Errorf("the read once the interceptor is gone: %v", err)
	}
}
