// too_large_test.go pins what happens to an answer over a backend's
// max_message_bytes, over real sockets and processes: the call it answers
// fails at once with -32603, data.kind "too_large" and the limit — from a
// stdio line, an HTTP JSON body, an SSE event and a wire frame alike — and
// the backend stays up for the next call.

package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func TestAnAnswerOverTheLimitFailsItsCallAtOnce(t *testing.T) {
	testkit.LeakCheck(t)
	specs, stop := ejBackends(t, filepath.Join(t.TempDir(), "journal"))
	t.Cleanup(stop)

	// An SSE answer: a tool that sends progress first, so that its answer
	// is an event on the POST's stream.
	srv := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "events", Version: "1"}})
	if err := srv.AddTools(&mcp.Tool{Name: "huge", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		_ = r.Progress(ctx, 1, 2, "")
		return pfText(strings.Repeat("y", 300_000))
	}}); err != nil {
		t.Fatal(err)
	}
	bh := mcphttp.NewHandler(srv, mcphttp.Options{})
	bs := httptest.NewServer(bh)
	t.Cleanup(func() { bs.CloseClientConnections(); bs.Close(); bh.Close() })

	const limit = 100_000
	base, _ := bkGateway(t, fmt.Sprintf("backends:\n"+
		"  - %s, name: es, max_message_bytes: %d, call_timeout: 1m}\n"+
		"  - %s, name: eh, max_message_bytes: %d, call_timeout: 1m}\n"+
		"  - {name: ev, kind: http, url: %q, max_message_bytes: %d, call_timeout: 1m}\n"+
		"  - %s, name: ep, max_message_bytes: %d, call_timeout: 1m}\n",
		specs["stdio"], limit, specs["http"], limit, bs.URL, limit, specs["proxy"], limit))
	bkWaitReady(t, base, http.StatusOK)
	f := fdHTTPConnect(t, base)

	for i, c := range []struct{ what, params string }{
		{"a stdio line", `{"name":"es__huge","arguments":{"bytes":300000}}`},
		{"an HTTP body", `{"name":"eh__huge","arguments":{"bytes":300000}}`},
		{"an SSE event", `{"name":"ev__huge","arguments":{},"_meta":{"progressToken":1}}`},
		{"a wire frame", `{"name":"ep__huge","arguments":{"bytes":300000}}`},
	} {
		// "At once": not after the backend's call_timeout (1m), which
		// would answer data.kind timeout instead.
		_, raw := fdMember(t, f.exchange(t, 10+i, "tools/call", c.params))
		var e jsonrpc.Error
		if err := json.Unmarshal([]byte(raw), &e); err != nil {
			t.Fatalf("%s: answer %q: %v", c.what, raw, err)
		}
		kind, _ := jsonrpc.LookupString(e.Data, "kind")
		got, _ := jsonrpc.LookupString(e.Data, "limit")
		if e.Code != jsonrpc.CodeInternalError || kind != "too_large" || got != fmt.Sprint(limit) {
			t.Errorf("%s over the limit: %s, want -32603 with data.kind too_large and the limit", c.what, raw)
		}
	}
	// Each backend is still up: a small answer comes through.
	for _, name := range []string{"es__huge", "eh__huge", "ep__huge"} {
		res, raw := fdMember(t, f.exchange(t, 20, "tools/call", `{"name":"`+name+`","arguments":{"bytes":10}}`))
		if raw != "" || pfResultText(t, json.RawMessage(res)) != "xxxxxxxxxx" {
			t.Errorf("%s after the refused answer: %s %s", name, res, raw)
		}
	}
}
