package catalogue

import (
	"encoding/json"
	"strings"
	"testing"
)

// reservedMetaCases are params a relayed call to a 2025 backend carries:
// small, or with a large argument (a file's text, as agents send), with
// and without a caller's reserved _meta keys.
var reservedMetaCases = []struct{ name, params string }{
	{"small", `{"name":"echo","arguments":{"text":"hello"}}`},
	{"small-reserved", `{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","x.example/k":1}}`},
	{"64k", `{"name":"echo","arguments":{"text":"` + strings.Repeat("lorem ipsum ", 64<<10/12) + `"}}`},
	{"64k-reserved", `{"name":"echo","arguments":{"text":"` + strings.Repeat("lorem ipsum ", 64<<10/12) + `"},"_meta":{"io.modelcontextprotocol/logLevel":"debug"}}`},
}

// BenchmarkWithoutReservedMeta is the relay's check of a call's params
// for the caller's reserved _meta keys, on the way to a 2025 backend.
func BenchmarkWithoutReservedMeta(b *testing.B) {
	for _, c := range reservedMetaCases {
		b.Run(c.name, func(b *testing.B) {
			params := json.RawMessage(c.params)
			b.SetBytes(int64(len(params)))
			b.ReportAllocs()
			for b.Loop() {
				_ = withoutReservedMeta(params)
			}
		})
	}
}

// FuzzWithoutReservedMeta checks the relay's promise for any params: what
// goes to a 2025 backend holds no reserved _meta key, however spelled,
// and params that held none go as they came, byte for byte.
func FuzzWithoutReservedMeta(f *testing.F) {
	for _, c := range reservedMetaCases {
		if len(c.params) < 1<<10 { // the fuzzer spends its time minimizing a 64 KiB seed
			f.Add(c.params)
		}
	}
	f.Add(`{"name":"e","_meta":{"io.modelcontextprotocol\/clientInfo":{},"k":1}}`)
	f.Add(`{"name":"e","_meta":{"\u0069o.modelcontextprotocol/logLevel":"debug"}}`)
	f.Add(`{"name":"e","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`)
	f.Add(`{"name":"e","_meta":"io.modelcontextprotocol/logLevel"}`)
	f.Fuzz(func(t *testing.T, params string) {
		if !json.Valid([]byte(params)) {
			return // the engine parsed every params it relays
		}
		held := reservedKeysOf(json.RawMessage(params))
		out := withoutReservedMeta(json.RawMessage(params))
		if !json.Valid(out) {
			t.Fatalf("params %s became %s, not JSON", params, out)
		}
		if left := reservedKeysOf(out); len(left) > 0 {
			t.Errorf("params %s went up as %s, with reserved keys %q", params, out, left)
		}
		if len(held) == 0 && string(out) != params {
			t.Errorf("params %s, with no reserved key, went up as %s", params, out)
		}
	})
}

// reservedKeysOf is the reserved keys of params' _meta, decoded, keys
// matched exactly (the last of twins counting, as encoding/json keeps).
// Keys that fold together never reach the relay: the engine refuses
// them first (mcp/paramkeys.go).
func reservedKeysOf(params json.RawMessage) []string {
	var p, meta map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p["_meta"], &meta) != nil {
		return nil // no object: nothing to relay in _meta
	}
	var keys []string
	for k := range meta {
		if reservedMeta[k] {
			keys = append(keys, k)
		}
	}
	return keys
}
