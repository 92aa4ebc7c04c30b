// slowclient_test.go pins, end to end, that a client which stops reading
// cannot stall a backend for everyone: a backend floods one caller with
// progress far beyond what the sockets between the gateway and that
// caller hold, the caller reads nothing, and another client's call to the
// same backend is still answered.

package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func TestAClientThatStopsReadingDoesNotStallTheBackend(t *testing.T) {
	testkit.LeakCheck(t)
	const (
		floods = 400
		size   = 64 << 10 // 400 × 64 KiB: far more than loopback socket buffers hold
	)
	flooded := make(chan struct{})
	back := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "flood", Version: "1"}})
	if err := back.AddTools(
		&mcp.Tool{Name: "flood", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			big := strings.Repeat("x", size)
			for i := range floods {
				if err := r.Progress(ctx, float64(i+1), floods, big); err != nil {
					return nil, err
				}
			}
			close(flooded)
			return pfText("flooded")
		}},
		&mcp.Tool{Name: "quick", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return pfText("quick")
		}},
	); err != nil {
		t.Fatal(err)
	}
	bh := mcphttp.NewHandler(back, mcphttp.Options{})
	bs := httptest.NewServer(bh)
	t.Cleanup(func() { bs.CloseClientConnections(); bs.Close(); bh.Close() })
	base, _ := bkGatewayWith(t, "backends: [{name: f, kind: http, url: \""+bs.URL+"\"}]\n",
		backends.Options{Backoff: bkFast.Backoff, PingInterval: -1})
	bkWaitReady(t, base, http.StatusOK)

	// The slow client: it posts the call and never reads the answer's
	// stream.
	slow := fdHTTPConnect(t, base)
	req, err := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, base+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"f__flood","arguments":{},"_meta":{"progressToken":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(mcphttp.HeaderSessionID, slow.session)
	req.Header.Set(mcphttp.HeaderProtocolVersion, "2025-11-25")
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() }) // unread until the end
	<-flooded

	c := pfConnect(t, base, "")
	res, err := pfCall(t, c, "tools/call", `{"name":"f__quick","arguments":{}}`)
	if err != nil {
		t.Fatalf("another client's call while one client reads nothing: %v", err)
	}
	if got := pfResultText(t, res); got != "quick" {
		t.Errorf("f__quick answered %q", got)
	}
}
