package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/internal/mcptest"
	"github.com/mcpgate/mcpgate/mcp"
)

// What 2026-07-28 adds to every result is spliced in, the result's own
// bytes and _meta kept: resultType first, the server's identity merged
// into a _meta the result has; a result that already says its
// resultType (the engine's own InputRequiredResult, a relayed one) gets
// only the server's identity.
func TestSessionlessResultsAreCompletedInPlace(t *testing.T) {
	s := newServer(t, mcp.Options{Info: mcp.Implementation{Name: "srv", Version: "9"}})
	for name, res := range map[string]string{
		"plain":      `{"content":[]}`,
		"meta":       `{"content":[],"_meta":{"k":1.50}}`,
		"emptymeta":  `{"_meta":{}}`,
		"empty":      `{}`,
		"resulttype": `{"resultType":"input_required","inputRequests":{}}`,
	} {
		res := res
		must(t, s.AddTools(&mcp.Tool{Name: name, SkipValidation: true, Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(res), nil
		}}))
	}
	info := `"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"9"}`
	for name, want := range map[string]string{
		"plain":      `{"resultType":"complete","_meta":{` + info + `},"content":[]}`,
		"meta":       `{"resultType":"complete","content":[],"_meta":{` + info + `,"k":1.50}}`,
		"emptymeta":  `{"resultType":"complete","_meta":{` + info + `}}`,
		"empty":      `{"resultType":"complete","_meta":{` + info + `}}`,
		"resulttype": `{"_meta":{` + info + `},"resultType":"input_required","inputRequests":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			a := mcptest.Sessionless(t, s, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
			if string(a.Result) != want {
				t.Errorf("result\n%s\nwant\n%s", a.Result, want)
			}
		})
	}
}
