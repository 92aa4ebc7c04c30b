// transport_test.go pins the line between a backend's own JSON-RPC errors,
// relayed verbatim, and the ones a client transport makes for a call its
// backend will never answer (*mcp.TransportError), which become -32603
// with data.backend. The line is drawn by type: an error the backend
// writes in a transport's words is still the backend's. The gateway test
// TestACallInFlightToADeadHTTPBackendNamesTheBackend shows the other side
// with a real process killed mid-call.

package catalogue_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestABackendsOwnErrorsPassVerbatimEvenInATransportsWords(t *testing.T) {
	f, bs, b, _ := relayed(t, catalogue.Options{})
	errs := map[string]string{
		"stream_broke":  `{"code":-32603,"message":"transport error: response stream ended before the response","data":{"reason":"response stream ended before the response"}}`,
		"http_refused":  `{"code":-32603,"message":"transport error: HTTP 502 Bad Gateway: request refused","data":{"httpStatus":502,"reason":"request refused"}}`,
		"own_internal":  `{"code":-32603,"message":"database on fire","data":{"reason":"the backend's own"}}`,
		"own_lookalike": `{"code":-32603,"message":"transport error: said by the backend itself"}`,
	}
	for name, raw := range errs {
		must(t, bs.AddTools(&mcp.Tool{Name: name, Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return nil, jsonrpc.RawError(json.RawMessage(raw))
		}}))
	}
	must(t, b.Sync(context.Background(), f.Server))
	for name, raw := range errs {
		m := f.call(t, "tools/call", `{"name":"b1__`+name+`","arguments":{}}`)
		e, err := m.ErrorObject()
		if err != nil || e == nil {
			t.Fatalf("%s: %s %s", name, m.Result, m.Error)
		}
		if string(m.Error) != raw {
			t.Errorf("%s: the backend's own error became %s, want it verbatim %s", name, m.Error, raw)
		}
	}
}
