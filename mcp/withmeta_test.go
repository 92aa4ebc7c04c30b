package mcp_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// WithMeta puts the given members first in _meta, keeps the old members
// keep allows and every other member of params, and means the same JSON as
// the input: keys with escapes included, which are re-encoded.
func TestWithMetaKeepsEveryMemberItIsNotToldToDrop(t *testing.T) {
	for _, c := range []struct {
		name, params, members, want string
	}{
		{"empty params", ``, `"a":1`, `{"_meta":{"a":1}}`},
		{"null params", `null`, ``, `{"_meta":{}}`},
		{"old members kept after the new", `{"_meta":{"b":2,"drop":3},"name":"x"}`, `"a":1`, `{"_meta":{"a":1,"b":2},"name":"x"}`},
		{"escaped keys", `{"_meta":{"\u0062":2},"n\u0061me":"x","arguments":{"k":"<&>"}}`, ``, `{"_meta":{"b":2},"name":"x","arguments":{"k":"<&>"}}`},
		{"a key that needs escaping", `{"_meta":{"q\"uote":1},"a\nb":2}`, `"z":0`, `{"_meta":{"z":0,"q\"uote":1},"a\nb":2}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mcp.WithMeta(json.RawMessage(c.params), []byte(c.members), func(k []byte) bool { return string(k) != "drop" })
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s is not JSON: %v", got, err)
			}
			if err := json.Unmarshal([]byte(c.want), &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func FuzzWithMeta(f *testing.F) {
	f.Add([]byte(`{"_meta":{"a":1,"\u0062":2},"name":"x","arguments":{}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		var in map[string]any
		if json.Unmarshal(params, &in) != nil || !json.Valid(params) {
			return
		}
		got := mcp.WithMeta(params, []byte(`"mcpgate/new":true`), func([]byte) bool { return true })
		var out map[string]any
		if err := json.Unmarshal(got, &out); err != nil {
			t.Fatalf("%s from %s is not JSON: %v", got, params, err)
		}
		meta, _ := out["_meta"].(map[string]any)
		if meta["mcpgate/new"] != true {
			t.Fatalf("the new member is missing from %s", got)
		}
		for k, v := range in {
			if k == "_meta" {
				continue
			}
			if !reflect.DeepEqual(out[k], v) {
				t.Fatalf("member %q changed: %s from %s", k, got, params)
			}
		}
	})
}

// A 2026-07-28 caller's params as the gateway relays them: the caller's
// reserved _meta members are dropped, a progress token is kept.
var callerParams = json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{"listChanged":true}},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},"progressToken":7},` +
	`"name":"test_simple_text","arguments":{}}`)

func dropReserved(k []byte) bool { return !bytes.HasPrefix(k, []byte("io.modelcontextprotocol/")) }

// WithMeta makes its output once, sized for what it writes: the members
// it drops from the old _meta are not room left unused in every relayed
// request.
func TestWithMetaSizesItsOutputForWhatItKeeps(t *testing.T) {
	members := []byte(`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`)
	var got json.RawMessage
	if n := testing.AllocsPerRun(100, func() { got = mcp.WithMeta(callerParams, members, dropReserved) }); n != 1 {
		t.Errorf("%v allocations, want 1", n)
	}
	if spare := cap(got) - len(got); spare > 32 {
		t.Errorf("%d bytes made and %d written: %d spare", cap(got), len(got), spare)
	}
}

func BenchmarkWithMetaRelayed(b *testing.B) {
	members := []byte(`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`)
	b.ReportAllocs()
	for b.Loop() {
		_ = mcp.WithMeta(callerParams, members, dropReserved)
	}
}
