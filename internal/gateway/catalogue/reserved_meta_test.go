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
