// call_timeout_test.go pins a backend's call_timeout over real sockets: a
// call its backend never answers is answered -32603 with data.kind
// "timeout" once the timeout has passed, and the backend is told to stop
// (notifications/cancelled reaches its handler); a call that keeps
// sending progress outlives the timeout and gets its result.

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func TestACallItsBackendNeverAnswersTimesOut(t *testing.T) {
	testkit.LeakCheck(t)
	cancelled := make(chan struct{}, 1)
	srv := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "quiet", Version: "1"}})
	if err := srv.AddTools(
		&mcp.Tool{Name: "never", Handler: func(ctx context.Context, _ *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, ctx.Err()
		}},
		&mcp.Tool{Name: "working", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			// Longer than the timeout in all, but never quiet for long.
			for i := range 8 {
				if err := r.Progress(ctx, float64(i), 8, ""); err != nil {
					return nil, err
				}
				select {
				case <-time.After(100 * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return pfText("done")
		}},
	); err != nil {
		t.Fatal(err)
	}
	bh := mcphttp.NewHandler(srv, mcphttp.Options{})
	bs := httptest.NewServer(bh)
	t.Cleanup(func() { bs.CloseClientConnections(); bs.Close(); bh.Close() })

	base, _ := bkGateway(t, fmt.Sprintf("backends:\n  - {name: q, kind: http, url: %q, call_timeout: 400ms}\n", bs.URL))
	bkWaitReady(t, base, http.StatusOK)
	f := fdHTTPConnect(t, base)

	start := time.Now()
	_, raw := fdMember(t, f.exchange(t, 1, "tools/call", `{"name":"q__never","arguments":{}}`))
	var e jsonrpc.Error
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatalf("answer %q: %v", raw, err)
	}
	kind, _ := jsonrpc.LookupString(e.Data, "kind")
	backend, _ := jsonrpc.LookupString(e.Data, "backend")
	if e.Code != jsonrpc.CodeInternalError || kind != "timeout" || backend != "q" {
		t.Fatalf("a call never answered: %s, want -32603 with data.kind timeout and data.backend q", raw)
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("answered after %v, before the timeout", took)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the backend's handler was never cancelled")
	}

	// A 2026-07-28 caller's call to this 2025 backend outlives its
	// request (park.go): the timeout ends it all the same.
	_, err := mxSessionless{url: base + "/mcp"}.Call(testkit.Context(t), "tools/call", json.RawMessage(`{"name":"q__never","arguments":{}}`))
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError || !strings.Contains(string(je.Data), `"kind":"timeout"`) {
		t.Fatalf("a 2026-07-28 call never answered: %v, want -32603 with data.kind timeout", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the backend's handler was never cancelled (2026-07-28 caller)")
	}

	res, raw := fdMember(t, f.exchange(t, 2, "tools/call", `{"name":"q__working","arguments":{},"_meta":{"progressToken":"p"}}`))
	if raw != "" || pfResultText(t, json.RawMessage(res)) != "done" {
		t.Fatalf("a call sending progress past the timeout: result %s error %s, want its result", res, raw)
	}
}
