package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/mcp"
)

// What 2026-07-28 adds to every result is spliced in, the result's own
// bytes and _meta kept: resultType first, the server's identity merged
// into a _meta the result has; a result that already says its
// resultType (the engine's own InputRequiredResult, a relayed one) gets
// only the server's identity.
// A long result (its end past jsonrpc's split size, left where it is in
// the answer) is completed the same way.
func TestSessionlessResultsAreCompletedInPlace(t *testing.T) {
	s := newServer(t, mcp.Options{Info: mcp.Implementation{Name: "srv", Version: "9"}})
	// padded is o with a last member long enough that the answer leaves
	// the result's end where it is.
	padded := func(o string) string {
		if o == `{}` {
			return `{"pad":"` + strings.Repeat("x", 10<<10) + `"}`
		}
		return o[:len(o)-1] + `,"pad":"` + strings.Repeat("x", 10<<10) + `"}`
	}
	results := map[string]string{
		"plain":      `{"content":[]}`,
		"meta":       `{"content":[],"_meta":{"k":1.50}}`,
		"emptymeta":  `{"_meta":{}}`,
		"empty":      `{}`,
		"resulttype": `{"resultType":"input_required","inputRequests":{}}`,
	}
	for name, res := range results {
		for _, r := range []struct{ name, res string }{{name, res}, {name + "-long", padded(res)}} {
			must(t, s.AddTools(&mcp.Tool{Name: r.name, SkipValidation: true, Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(r.res), nil
			}}))
		}
	}
	info := `"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"9"}`
	wants := map[string]string{
		"plain":      `{"resultType":"complete","_meta":{` + info + `},"content":[]}`,
		"meta":       `{"resultType":"complete","content":[],"_meta":{` + info + `,"k":1.50}}`,
		"emptymeta":  `{"resultType":"complete","_meta":{` + info + `}}`,
		"empty":      `{"resultType":"complete","_meta":{` + info + `}}`,
		"resulttype": `{"_meta":{` + info + `},"resultType":"input_required","inputRequests":{}}`,
	}
	for name, want := range wants {
		for _, w := range []struct{ name, want string }{{name, want}, {name + "-long", padded(want)}} {
			t.Run(w.name, func(t *testing.T) {
				a := mcptest.Sessionless(t, s, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+w.name+`","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
				if string(a.Result) != w.want {
					t.Errorf("result\n%.300s\nwant\n%.300s", a.Result, w.want)
				}
			})
		}
	}
}
