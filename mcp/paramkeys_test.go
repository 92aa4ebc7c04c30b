// paramkeys_test.go pins the rule of paramkeys.go: gated params whose keys
// a case-insensitive decoder would read differently are refused with
// -32602 naming the key, before the gate and before any handler.

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestGatedParamsWhoseKeysFoldTogetherAreRefusedBeforeTheGate(t *testing.T) {
	tests := []struct {
		name, method, params string
		key, conflictsWith   string
	}{
		{"a second name in upper case", "tools/call", `{"name":"deploy","NAME":"secret","arguments":{}}`, "NAME", "name"},
		{"the upper-case name first", "tools/call", `{"NAME":"secret","name":"deploy"}`, "NAME", "name"},
		{"a lone key that folds to name", "tools/call", `{"Name":"deploy","arguments":{}}`, "Name", "name"},
		{"an exact duplicate name", "tools/call", `{"name":"deploy","name":"secret"}`, "name", "name"},
		{"a duplicate spelled with an escape", "tools/call", `{"name":"deploy","\u006eame":"secret"}`, "name", "name"},
		{"arguments spelled with a long s", "tools/call", `{"name":"deploy","arguments":{"env":"a"},"argument\u017f":{"env":"b"}}`, "argument\u017f", "arguments"},
		{"a progress token spelled with the Kelvin sign", "tools/call", `{"name":"deploy","_meta":{"progressToken":1,"progressTo\u212aen":2}}`, "progressTo\u212aen", "progressToken"},
		{"two keys that decode to the same replacement rune", "tools/call", "{\"name\":\"deploy\",\"\xff\":1,\"\xfe\":2}", "\ufffd", "\ufffd"},
		{"a second uri", "resources/read", `{"uri":"x://public","URI":"x://secret"}`, "URI", "uri"},
		{"a second uri on subscribe", "resources/subscribe", `{"uri":"x://public","Uri":"x://secret"}`, "Uri", "uri"},
		{"a second uri on unsubscribe", "resources/unsubscribe", `{"uri":"x://public","uRI":"x://secret"}`, "uRI", "uri"},
		{"a second prompt name", "prompts/get", `{"name":"review","nAme":"other","arguments":{"diff":"x"}}`, "nAme", "name"},
		{"a second ref", "completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"REF":{"type":"ref/prompt","name":"x"},"argument":{"name":"diff","value":""}}`, "REF", "ref"},
		{"a second name inside ref", "completion/complete", `{"ref":{"type":"ref/prompt","name":"review","NAME":"x"},"argument":{"name":"diff","value":""}}`, "NAME", "name"},
		{"a second _meta", "prompts/get", `{"name":"review","_meta":{},"_META":{}}`, "_META", "_meta"},
		{"a second taskId", "tasks/get", `{"taskId":"mine","TASKID":"alices"}`, "TASKID", "taskId"},
		{"a taskId spelled with the Kelvin sign", "tasks/cancel", `{"taskId":"mine","tas\u212aId":"alices"}`, "tas\u212aId", "taskId"},
		{"a taskId spelled with a long s", "tasks/update", `{"taskId":"mine","ta\u017fkId":"alices","inputResponses":{}}`, "ta\u017fkId", "taskId"},
		{"a second inputResponses", "tasks/update", `{"taskId":"mine","inputResponses":{},"InputResponses":{}}`, "InputResponses", "inputResponses"},
		{"a 2026-07-28 request field folded in _meta", "tools/call", `{"name":"deploy","_meta":{"io.modelcontextprotocol/LOGLEVEL":"debug"}}`, "io.modelcontextprotocol/LOGLEVEL", "io.modelcontextprotocol/logLevel"},
		{"a second level", "logging/setLevel", `{"level":"error","LEVEL":"debug"}`, "LEVEL", "level"},
		{"a second cursor", "tools/list", `{"cursor":"a","Cursor":"b"}`, "Cursor", "cursor"},
		// Past the first sixteen keys the set compares by FoldKey in a map.
		{"a twin past many keys", "tools/call", `{"name":"deploy","k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"K3":3}`, "K3", "k3"},
		{"a second protocolVersion", "initialize", `{"protocolVersion":"2025-06-18","PROTOCOLVERSION":"x","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`, "PROTOCOLVERSION", "protocolVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := &spyGate{}
			var ran []string
			srv := gatedServer(t, gate, "", &ran)
			ss, _ := readySession(t, srv)
			e := rpcError(t, call(t, ss, tt.method, tt.params), jsonrpc.CodeInvalidParams)
			data := decode[map[string]string](t, e.Data)
			if data["kind"] != "ambiguous_key" || data["key"] != tt.key || data["conflictsWith"] != tt.conflictsWith {
				t.Fatalf("refusal %s: data %v, want key %q against %q", e.Message, data, tt.key, tt.conflictsWith)
			}
			if got := gate.calls(); len(got) != 0 {
				t.Fatalf("the gate was asked about %+v", got)
			}
			if len(ran) != 0 {
				t.Fatalf("handlers ran: %v", ran)
			}
		})
	}
}

// The rule covers every method the engine serves: one added without the
// keys it reads named would let their folded twins through (tasks/* were
// not covered, and the relay routed on taskId).
func TestEveryServedMethodDeclaresTheKeysItReads(t *testing.T) {
	srv := newServer(t, mcp.Options{Complete: func(context.Context, *mcp.Request) (json.RawMessage, error) { return nil, nil }})
	methods := srv.ServedMethods()
	if len(methods) < 18 {
		t.Fatalf("the engine serves %d methods: %v", len(methods), methods)
	}
	for _, m := range methods {
		if !mcp.DeclaresReadKeys(m) {
			t.Errorf("%s is served but paramkeys.go does not name the keys it reads", m)
		}
	}
}

// The sessionless front's own methods are checked as the others are.
func TestSessionlessOwnMethodsRefuseFoldedKeys(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	for method, params := range map[string]string{
		"server/discover":      `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/PROTOCOLVERSION":"2025-06-18"}}`,
		"subscriptions/listen": `{"notifications":{},"NOTIFICATIONS":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
	} {
		a := mcptest.Sessionless(t, srv, "someone", `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`)
		e := rpcError(t, a, jsonrpc.CodeInvalidParams)
		if data := decode[map[string]string](t, e.Data); data["kind"] != "ambiguous_key" {
			t.Errorf("%s: %s %s, want ambiguous_key", method, e.Message, e.Data)
		}
	}
}

func TestGatedParamsWithDistinctKeysPass(t *testing.T) {
	tests := []struct{ name, method, params string }{
		// Not ones its schema declares: TestToolsCallSchemaViolations.
		{"a tool's own arguments may differ only in case", "tools/call", `{"name":"deploy","arguments":{"env":"a","region":"b","REGION":"c"}}`},
		{"an unrelated extra key", "tools/call", `{"name":"deploy","arguments":{"env":"a"},"task":{}}`},
		{"_meta with keys of its own", "tools/call", `{"name":"deploy","arguments":{"env":"a"},"_meta":{"progressToken":1,"x/y":2}}`},
		{"a uri", "resources/read", `{"uri":"x://secret"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := &spyGate{}
			var ran []string
			ss, _ := readySession(t, gatedServer(t, gate, "", &ran))
			result(t, call(t, ss, tt.method, tt.params))
			if len(ran) != 1 {
				t.Fatalf("handlers ran: %v", ran)
			}
		})
	}
}

func TestUngatedMethodsKeepTheirParamsAsTheyCame(t *testing.T) {
	srv := newServer(t, mcp.Options{})
	srv.Handle("x/echo", mcp.HandlerFunc(func(_ context.Context, r *mcp.Request) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	}))
	ss, _ := readySession(t, srv)
	result(t, call(t, ss, "x/echo", `{"name":"a","NAME":"b"}`))
}

func TestFoldKeyMatchesEncodingJSON(t *testing.T) {
	// encoding/json is the reader the rule is written against: two keys
	// fold together exactly when it would fill one field from both.
	keys := []string{"name", "NAME", "Name", "nAmE", "uri", "URI", "k", "K", "\u212a", "s", "S", "\u017f",
		"\u00e9", "\u00c9", "\u03c3", "\u03a3", "\u03c2", "arguments", "argument\u017f", "ß", "ẞ", "ǅ", "Ǆ", "ǆ"}
	for _, a := range keys {
		for _, b := range keys {
			got := structFieldFilled(t, a, []byte(`{`+quote(b)+`:1}`))
			if same := jsonrpc.FoldKey(a) == jsonrpc.FoldKey(b); same != got {
				t.Errorf("FoldKey(%q)==FoldKey(%q) is %v; encoding/json fills field %q from key %q: %v", a, b, same, a, b, got)
			}
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// structFieldFilled reports whether encoding/json fills a struct field
// tagged field from the one member of doc.
func structFieldFilled(t *testing.T, field string, doc []byte) bool {
	t.Helper()
	typ := reflect.StructOf([]reflect.StructField{{
		Name: "F", Type: reflect.TypeFor[*int](), Tag: reflect.StructTag(`json:` + strconv.Quote(field)),
	}})
	v := reflect.New(typ)
	if err := json.Unmarshal(doc, v.Interface()); err != nil {
		t.Fatal(err)
	}
	return !v.Elem().Field(0).IsNil()
}

// BenchmarkCheckParamKeys is the check of a tools/call's params: as a
// 2025 client sends them, as a 2026-07-28 client does (its _meta's
// reserved keys share a long prefix), and as the relay sends them on.
// The last is a hostile request's 300,000 keys, under the 4 MiB a body
// may have: each key compared with all before it took minutes.
func BenchmarkCheckParamKeys(b *testing.B) {
	var many strings.Builder
	many.WriteString(`{"name":"bench_echo","arguments":{}`)
	for i := range 300_000 {
		fmt.Fprintf(&many, `,"k%d":1`, i)
	}
	many.WriteString("}")
	for _, c := range []struct{ name, params string }{
		{"2025", `{"name":"bench_echo","arguments":{"text":"hello"}}`},
		{"2026-07-28", `{"name":"bench_echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`},
		{"relayed", `{"name":"bench_echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcpgate","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}`},
		{"300k-keys", many.String()},
	} {
		b.Run(c.name, func(b *testing.B) {
			params := json.RawMessage(c.params)
			for b.Loop() {
				if err := mcp.CheckParamKeys("tools/call", params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
