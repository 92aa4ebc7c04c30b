// request_entry_test.go pins Request.EntryName: the member each gated
// method names its entry by, looked up once per params.

package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

func TestEntryNameIsTheMemberTheMethodNamesItsEntryBy(t *testing.T) {
	for _, c := range []struct {
		method, params, want string
		ok                   bool
	}{
		{"tools/call", `{"name":"echo","arguments":{"uri":"x"}}`, "echo", true},
		{"prompts/get", `{"arguments":{"name":"x"},"name":"greet"}`, "greet", true},
		{"resources/read", `{"uri":"mem://a","name":"x"}`, "mem://a", true},
		{"tools/call", `{"name":"caf\u00e9"}`, "café", true},
		{"tools/call", `{"name":7}`, "", false},
		{"tools/call", `{}`, "", false},
		{"tools/call", ``, "", false},
	} {
		r := &mcp.Request{Method: c.method, Params: json.RawMessage(c.params)}
		if got, ok := r.EntryName(); got != c.want || ok != c.ok {
			t.Errorf("%s %s: EntryName = %q, %v; want %q, %v", c.method, c.params, got, ok, c.want, c.ok)
		}
	}
}

func TestEntryNameIsLookedUpOnceForTheSameParams(t *testing.T) {
	params := []byte(`{"name":"aaaa"}`)
	r := &mcp.Request{Method: "tools/call", Params: params}
	if got, _ := r.EntryName(); got != "aaaa" {
		t.Fatalf("EntryName = %q", got)
	}
	copy(params[9:], "bbbb") // the same slice: the kept lookup answers
	if got, _ := r.EntryName(); got != "aaaa" {
		t.Errorf("EntryName after a change in place = %q, want the kept %q", got, "aaaa")
	}
	r.Params = json.RawMessage(`{"name":"cccc"}`) // replaced: looked up again
	if got, _ := r.EntryName(); got != "cccc" {
		t.Errorf("EntryName after Params was replaced = %q, want %q", got, "cccc")
	}
}
