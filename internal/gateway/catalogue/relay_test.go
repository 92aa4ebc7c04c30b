package catalogue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

var ctx = context.Background()

// The front lists the backend's own definition bytes with only the name's
// value changed: unknown members, _meta, key order and whitespace survive.
func TestListedDefinitionIsTheBackendsWithOnlyTheNamePrefixed(t *testing.T) {
	f, _, _, _ := relayed(t, catalogue.Options{})
	tools := f.list(t, "tools/list", "tools")
	if got, want := names(tools, "name"), []string{"b1__pretty", "b1__echo", "b1__whoami", "b1__faithful", "b1__fail"}; !slices.Equal(got, want) {
		t.Fatalf("front tools %v, want %v", got, want)
	}
	want := strings.Replace(prettyDef, `"name":  "pretty"`, `"name":  "b1__pretty"`, 1)
	if string(tools[0]) != want {
		t.Errorf("definition changed in relay:\n got %s\nwant %s", tools[0], want)
	}
	if got := names(f.list(t, "prompts/list", "prompts"), "name"); !slices.Equal(got, []string{"b1__greet"}) {
		t.Errorf("front prompts %v", got)
	}
	if got := names(f.list(t, "resources/list", "resources"), "uri"); !slices.Equal(got, []string{"mem://a"}) {
		t.Errorf("front resources %v (URIs are never prefixed)", got)
	}
	if got := names(f.list(t, "resources/templates/list", "resourceTemplates"), "uriTemplate"); !slices.Equal(got, []string{"mem://items/{id}"}) {
		t.Errorf("front templates %v", got)
	}
}

// Results and errors come back as the backend wrote them, byte for byte.
func TestCallResultsAndErrorsAreTheBackendsBytes(t *testing.T) {
	f, _, _, _ := relayed(t, catalogue.Options{})
	if res := f.result(t, "tools/call", `{"name":"b1__faithful","arguments":{}}`); string(res) != faithful {
		t.Errorf("result changed in relay:\n got %s\nwant %s", res, faithful)
	}
	m := f.call(t, "tools/call", `{"name":"b1__fail"}`)
	if m.Kind() != jsonrpc.KindError || string(m.Error) != customError {
		t.Errorf("error changed in relay:\n got %s\nwant %s", m.Error, customError)
	}
}

// Arguments and _meta reach the backend's tool as the caller sent them;
// only the name is put back and the progress token replaced by the
// gateway's own (mapped back per caller, inflight.go), byte for byte
// around it.
func TestArgumentsReachTheBackendUnchanged(t *testing.T) {
	f, bs, _, _ := relayed(t, catalogue.Options{})
	args := `{ "n": 123456789012345678901234567890, "s": "é\u00e9",  "extra": [1.50, null] }`
	meta := `{"progressToken": "tok-1", "vendor/x": {"y": 1}}`
	res := f.result(t, "tools/call", `{"_meta": `+meta+`, "name": "b1__echo", "arguments": `+args+`}`)
	if toolText(t, res) != "echoed" {
		t.Fatalf("echo answered %s", res)
	}
	if got := <-bs.args; string(got) != args {
		t.Errorf("backend saw arguments %s, want %s", got, args)
	}
	if got, want := <-bs.metas, strings.Replace(meta, `"tok-1"`, `"gw-1"`, 1); string(got) != want {
		t.Errorf("backend saw _meta %s, want %s", got, want)
	}
}

func TestResourcesAndTemplatesAreReadFromTheBackend(t *testing.T) {
	f, _, _, _ := relayed(t, catalogue.Options{})
	if res := f.result(t, "resources/read", `{"uri":"mem://a"}`); string(res) != `{"contents":[{"uri":"mem://a","text":"b1 a"}]}` {
		t.Errorf("resource read %s", res)
	}
	if res := f.result(t, "resources/read", `{"uri":"mem://items/42"}`); string(res) != `{"contents":[{"uri":"mem://items/42","text":"item 42"}]}` {
		t.Errorf("template read %s", res)
	}
	if m := f.call(t, "resources/read", `{"uri":"mem://nowhere"}`); m.Kind() != jsonrpc.KindError {
		t.Errorf("unknown URI answered %s", m.Result)
	}
}

func TestPromptIsGotByItsPrefixedName(t *testing.T) {
	f, _, _, _ := relayed(t, catalogue.Options{})
	res := f.result(t, "prompts/get", `{"name":"b1__greet","arguments":{"who":"ann"}}`)
	if !bytes.Contains(res, []byte("hello ann")) {
		t.Errorf("prompt answered %s", res)
	}
	// The backend judges its own required arguments.
	m := f.call(t, "prompts/get", `{"name":"b1__greet"}`)
	if e, _ := m.ErrorObject(); m.Kind() != jsonrpc.KindError || e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("missing argument answered %s %s", m.Result, m.Error)
	}
}

func TestEveryPageOfTheBackendIsMirrored(t *testing.T) {
	bs := mcp.NewServer(mcp.Options{PageSize: 2})
	var want []string
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		must(t, bs.AddTools(&mcp.Tool{Name: n, Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"content":[]}`), nil
		}}))
		want = append(want, "p__"+n)
	}
	f := newFront(t)
	must(t, catalogue.New("p", connect(t, bs), catalogue.Options{}).Sync(ctx, f.Server))
	if got := names(f.list(t, "tools/list", "tools"), "name"); !slices.Equal(got, want) {
		t.Errorf("front tools %v, want %v", got, want)
	}
}

func TestResyncFollowsTheBackendAndNotifiesOnlyOnChange(t *testing.T) {
	f, bs, b, _ := relayed(t, catalogue.Options{})
	f.out.Take("")
	must(t, b.Sync(ctx, f.Server))
	if n := f.out.Take("notifications/tools/list_changed"); n != 0 {
		t.Errorf("an unchanged re-sync sent %d list_changed", n)
	}
	bs.RemoveTools("echo")
	must(t, b.Sync(ctx, f.Server))
	if got := names(f.list(t, "tools/list", "tools"), "name"); slices.Contains(got, "b1__echo") {
		t.Errorf("removed tool still listed: %v", got)
	}
	if n := f.out.Take("notifications/tools/list_changed"); n == 0 {
		t.Error("the front's session was not told the tools changed")
	}
	if m := f.call(t, "tools/call", `{"name":"b1__echo"}`); m.Kind() != jsonrpc.KindError {
		t.Errorf("removed tool still callable: %s", m.Result)
	}
}

func TestUnsyncRemovesEverythingAndSyncBringsItBack(t *testing.T) {
	f, _, b, _ := relayed(t, catalogue.Options{})
	b.Unsync(f.Server)
	for _, l := range [][2]string{{"tools/list", "tools"}, {"resources/list", "resources"},
		{"resources/templates/list", "resourceTemplates"}, {"prompts/list", "prompts"}} {
		if got := f.list(t, l[0], l[1]); len(got) != 0 {
			t.Errorf("%s after Unsync: %s", l[0], got)
		}
	}
	must(t, b.Sync(ctx, f.Server))
	if got := f.list(t, "tools/list", "tools"); len(got) != 5 {
		t.Errorf("after re-sync %d tools, want 5", len(got))
	}
}

// Two backends with the same tool names each keep their own prefix; the
// second one's URIs, already held by the first, are skipped and logged.
func TestTwoBackendsSharingOneFront(t *testing.T) {
	var logs logBuffer
	claims := catalogue.NewClaims()
	f := newFront(t)
	b1 := catalogue.New("b1", connect(t, newBackendServer(t, "b1", 0).Server), catalogue.Options{Claims: claims, Logger: logs.logger()})
	b2 := catalogue.New("b2", connect(t, newBackendServer(t, "b2", 0).Server), catalogue.Options{Claims: claims, Logger: logs.logger()})
	must(t, b1.Sync(ctx, f.Server))
	must(t, b2.Sync(ctx, f.Server))

	for _, who := range []string{"b1", "b2"} {
		if got := toolText(t, f.result(t, "tools/call", `{"name":"`+who+`__whoami"}`)); got != who {
			t.Errorf("%s__whoami answered %q", who, got)
		}
	}
	if res := f.result(t, "resources/read", `{"uri":"mem://a"}`); !bytes.Contains(res, []byte("b1 a")) {
		t.Errorf("mem://a was taken over by the second backend: %s", res)
	}
	if got := f.list(t, "resources/list", "resources"); len(got) != 1 {
		t.Errorf("front resources %s, want only b1's", got)
	}
	if out := logs.String(); !strings.Contains(out, "collision") || !strings.Contains(out, "mem://a") || !strings.Contains(out, "owner=b1") {
		t.Errorf("collision not logged: %s", out)
	}
	// When b1 leaves, its URIs are free; b2's next Sync takes them.
	b1.Unsync(f.Server)
	must(t, b2.Sync(ctx, f.Server))
	if res := f.result(t, "resources/read", `{"uri":"mem://a"}`); !bytes.Contains(res, []byte("b2 a")) {
		t.Errorf("mem://a after b1 left: %s", res)
	}
}

func TestNoPrefixKeepsTheBackendsNames(t *testing.T) {
	f, _, _, _ := relayed(t, catalogue.Options{Prefix: catalogue.NoPrefix})
	tools := f.list(t, "tools/list", "tools")
	if string(tools[0]) != prettyDef {
		t.Errorf("definition %s, want %s", tools[0], prettyDef)
	}
	if got := toolText(t, f.result(t, "tools/call", `{"name":"whoami"}`)); got != "b1" {
		t.Errorf("whoami answered %q", got)
	}
}

func TestCustomPrefix(t *testing.T) {
	f, _, _, _ := relayed(t, catalogue.Options{Prefix: "x."})
	if got := toolText(t, f.result(t, "tools/call", `{"name":"x.whoami"}`)); got != "b1" {
		t.Errorf("x.whoami answered %q", got)
	}
}

// A backend that cannot be reached answers -32603 with data.backend, not an
// isError result and not a bare internal error.
func TestUnreachableBackendAnswersInternalErrorNamingIt(t *testing.T) {
	f, _, _, client := relayed(t, catalogue.Options{})
	must(t, client.Close())
	for _, c := range [][2]string{{"tools/call", `{"name":"b1__whoami"}`}, {"resources/read", `{"uri":"mem://a"}`},
		{"prompts/get", `{"name":"b1__greet","arguments":{"who":"x"}}`}} {
		m := f.call(t, c[0], c[1])
		e, err := m.ErrorObject()
		if m.Kind() != jsonrpc.KindError || err != nil || e.Code != jsonrpc.CodeInternalError {
			t.Fatalf("%s: want -32603, got %s %s", c[0], m.Result, m.Error)
		}
		if backend, _ := jsonrpc.LookupString(e.Data, "backend"); backend != "b1" {
			t.Errorf("%s: data %s lacks backend b1", c[0], e.Data)
		}
	}
	if err := catalogue.New("b1", client, catalogue.Options{}).Sync(ctx, f.Server); err == nil {
		t.Error("Sync with an unreachable backend succeeded")
	}
}

// A backend without prompts (it answers -32601) simply has none.
func TestMissingListMethodMeansNoEntries(t *testing.T) {
	bs := newBackendServer(t, "b1", 0)
	bs.Handle("prompts/list", mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found", nil)
	}))
	f := newFront(t)
	must(t, catalogue.New("b1", connect(t, bs.Server), catalogue.Options{}).Sync(ctx, f.Server))
	if got := f.list(t, "prompts/list", "prompts"); len(got) != 0 {
		t.Errorf("prompts %s", got)
	}
	if got := f.list(t, "tools/list", "tools"); len(got) != 5 {
		t.Errorf("%d tools, want 5", len(got))
	}
}

// A list that fails otherwise fails Sync and leaves the front as it was.
func TestFailedListLeavesTheFrontAsItWas(t *testing.T) {
	bs := newBackendServer(t, "b1", 0)
	var broken atomic.Bool
	bs.Handle("prompts/list", mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		if broken.Load() {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "broken", nil)
		}
		return json.RawMessage(`{"prompts":[]}`), nil
	}))
	f := newFront(t)
	b := catalogue.New("b1", connect(t, bs.Server), catalogue.Options{})
	must(t, b.Sync(ctx, f.Server))
	broken.Store(true)
	bs.RemoveTools("echo")
	if err := b.Sync(ctx, f.Server); err == nil {
		t.Fatal("Sync succeeded though prompts/list failed")
	}
	if got := names(f.list(t, "tools/list", "tools"), "name"); !slices.Contains(got, "b1__echo") {
		t.Errorf("a failed Sync changed the front: %v", got)
	}
}

// roleGate hides entries whose minimum role is not "", so the test sees
// which role each relayed entry was registered with.
type roleGate struct{}

func (roleGate) Visible(_ context.Context, e mcp.Entry) bool { return e.MinRole == "" }
func (roleGate) Admit(_ context.Context, e mcp.Entry) error {
	if e.MinRole != "" {
		return jsonrpc.NewError(jsonrpc.CodeForbidden, "forbidden", map[string]string{"minRole": e.MinRole})
	}
	return nil
}

func TestMinRoleAppliesToEveryEntry(t *testing.T) {
	f := &front{Server: mcp.NewServer(mcp.Options{Gate: roleGate{}}), out: &mcptest.Recorder{}}
	f.ss = f.NewSession(mcp.SessionOptions{Version: mcp.LatestVersion})
	t.Cleanup(f.ss.Close)
	must(t, catalogue.New("b1", connect(t, newBackendServer(t, "b1", 0).Server), catalogue.Options{MinRole: "admin"}).Sync(ctx, f.Server))
	for _, l := range [][2]string{{"tools/list", "tools"}, {"resources/list", "resources"},
		{"resources/templates/list", "resourceTemplates"}, {"prompts/list", "prompts"}} {
		if got := f.list(t, l[0], l[1]); len(got) != 0 {
			t.Errorf("%s shows entries below MinRole: %s", l[0], got)
		}
	}
	m := f.call(t, "tools/call", `{"name":"b1__whoami"}`)
	if e, _ := m.ErrorObject(); m.Kind() != jsonrpc.KindError || e.Code != jsonrpc.CodeForbidden {
		t.Errorf("call below MinRole answered %s %s", m.Result, m.Error)
	}
}

// Two backends without prefixes listing the same tool name: the first
// keeps it, the second's is renamed NAME__tool (logged, never fatal), and
// each answers as itself, the renamed one called by its own name.
func TestNameCollisionIsResolvedByTheBackendsPrefix(t *testing.T) {
	var logs logBuffer
	claims := catalogue.NewClaims()
	f := newFront(t)
	opts := catalogue.Options{Claims: claims, Logger: logs.logger(), Prefix: catalogue.NoPrefix}
	b1 := catalogue.New("b1", connect(t, newBackendServer(t, "b1", 0).Server), opts)
	b2srv := newBackendServer(t, "b2", 0)
	b2 := catalogue.New("b2", connect(t, b2srv.Server), opts)
	must(t, b1.Sync(ctx, f.Server))
	must(t, b2.Sync(ctx, f.Server))

	if got := toolText(t, f.result(t, "tools/call", `{"name":"whoami"}`)); got != "b1" {
		t.Errorf("whoami answered %q, want the first backend's", got)
	}
	if got := toolText(t, f.result(t, "tools/call", `{"name":"b2__whoami"}`)); got != "b2" {
		t.Errorf("b2__whoami answered %q", got)
	}
	f.result(t, "tools/call", `{"name":"b2__echo","arguments":{"x":1}}`)
	select {
	case args := <-b2srv.args:
		if string(args) != `{"x":1}` {
			t.Errorf("the renamed tool's arguments reached the backend as %s", args)
		}
	default:
		t.Error("the renamed echo did not reach b2")
	}
	var names []string
	for _, def := range f.list(t, "tools/list", "tools") {
		name, _ := jsonrpc.LookupString(def, "name")
		names = append(names, name)
	}
	for _, want := range []string{"whoami", "b2__whoami", "echo", "b2__echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if out := logs.String(); !strings.Contains(out, "renamed") || !strings.Contains(out, "as=b2__whoami") {
		t.Errorf("the renaming is not logged: %s", out)
	}
	// A resync keeps the same names.
	must(t, b2.Sync(ctx, f.Server))
	if got := toolText(t, f.result(t, "tools/call", `{"name":"b2__whoami"}`)); got != "b2" {
		t.Errorf("after a resync b2__whoami answered %q", got)
	}
}

// A tool of the front server's own, reserved in the ledger, keeps its
// name when an unprefixed backend lists the same one: the backend's is
// renamed with the backend's name, as at any collision, and the server's
// own still answers.
func TestAReservedNameStaysTheFrontsOwn(t *testing.T) {
	var logs logBuffer
	claims := catalogue.NewClaims()
	f := newFront(t)
	must(t, f.AddTools(&mcp.Tool{Name: "whoami", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[{"type":"text","text":"the front"}]}`), nil
	}}))
	claims.ReserveTools("whoami")
	b1 := catalogue.New("b1", connect(t, newBackendServer(t, "b1", 0).Server), catalogue.Options{Claims: claims, Logger: logs.logger(), Prefix: catalogue.NoPrefix})
	must(t, b1.Sync(ctx, f.Server))
	if got := toolText(t, f.result(t, "tools/call", `{"name":"whoami"}`)); got != "the front" {
		t.Errorf("whoami answered %q, want the front's own tool", got)
	}
	if got := toolText(t, f.result(t, "tools/call", `{"name":"b1__whoami"}`)); got != "b1" {
		t.Errorf("b1__whoami answered %q", got)
	}
	if out := logs.String(); !strings.Contains(out, "as=b1__whoami") || !strings.Contains(out, `owner="(the gateway)"`) {
		t.Errorf("the renaming is not logged as a collision with the gateway: %s", out)
	}
}

// A listed tool whose x-mcp-header annotations break SEP-2243's rules is
// left out of the front, as a 2026-07-28 client must leave it out, and
// alone: the backend's other tools are relayed. A valid annotation is
// relayed with the tool, so the front checks the call's headers.
func TestAToolWithAnInvalidHeaderAnnotationIsLeftOutAlone(t *testing.T) {
	bs := newBackendServer(t, "b1", 0)
	bs.Handle("tools/list", mcp.HandlerFunc(func(context.Context, *mcp.Request) (json.RawMessage, error) {
		return json.RawMessage(`{"tools":[` +
			`{"name":"good","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}},` +
			`{"name":"number","inputSchema":{"type":"object","properties":{"s":{"type":"number","x-mcp-header":"Score"}}}},` +
			`{"name":"twice","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"F"},"b":{"type":"string","x-mcp-header":"f"}}}},` +
			`{"name":"plain","inputSchema":{"type":"object"}}]}`), nil
	}))
	f := newFront(t)
	must(t, catalogue.New("b1", connect(t, bs.Server), catalogue.Options{}).Sync(ctx, f.Server))
	got := names(f.list(t, "tools/list", "tools"), "name")
	slices.Sort(got)
	if want := []string{"b1__good", "b1__plain"}; !slices.Equal(got, want) {
		t.Errorf("front tools %v, want %v", got, want)
	}
}

// A backend's -32602 about a tool or prompt the front renamed names the
// entry as the client called it — in the message where the name stands
// whole, and in a data member whose whole value is the name — and keeps
// every other byte; with no prefix it passes exactly as it came.
func TestInvalidParamsNameTheEntryTheClientCalled(t *testing.T) {
	back := mcp.NewServer(mcp.Options{})
	must(t, back.AddTools(
		&mcp.Tool{Name: "check", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
			Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"content":[]}`), nil
			}},
		&mcp.Tool{Name: "own", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "own: the owner of own-files is unknown (own)",
				json.RawMessage(`{"tool":"own","file":"own-files","n":1}`))
		}},
	))
	must(t, back.AddPrompts(&mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}},
		Get: func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
			return json.RawMessage(`{"messages":[]}`), nil
		}}))

	for _, tt := range []struct {
		prefix, want string
	}{{"", "p__"}, {catalogue.NoPrefix, ""}} {
		f := newFront(t)
		must(t, catalogue.New("p", connect(t, back), catalogue.Options{Prefix: tt.prefix}).Sync(context.Background(), f.Server))

		m := f.call(t, "tools/call", `{"name":"`+tt.want+`check","arguments":{}}`)
		e, _ := m.ErrorObject()
		if e == nil || e.Code != jsonrpc.CodeInvalidParams || e.Message != "invalid arguments for tool "+tt.want+"check" {
			t.Errorf("prefix %q: check without n answered %s", tt.prefix, m.Error)
		}
		if tool, _ := jsonrpc.LookupString(e.Data, "tool"); tool != tt.want+"check" {
			t.Errorf("prefix %q: data.tool = %q in %s", tt.prefix, tool, e.Data)
		}

		m = f.call(t, "tools/call", `{"name":"`+tt.want+`own","arguments":{}}`)
		want := `{"code":-32602,"message":"` + tt.want + `own: the owner of own-files is unknown (` + tt.want + `own)","data":{"tool":"` + tt.want + `own","file":"own-files","n":1}}`
		if string(m.Error) != want {
			t.Errorf("prefix %q: own answered\n%s\nwant\n%s", tt.prefix, m.Error, want)
		}

		m = f.call(t, "prompts/get", `{"name":"`+tt.want+`greet"}`)
		want = `{"code":-32602,"message":"missing required prompt arguments","data":{"missing":["who"],"name":"` + tt.want + `greet"}}`
		if string(m.Error) != want {
			t.Errorf("prefix %q: greet without who answered\n%s\nwant\n%s", tt.prefix, m.Error, want)
		}
	}
}
