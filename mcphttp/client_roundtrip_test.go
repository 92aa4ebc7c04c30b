// client_roundtrip_test.go pins StreamableConn.RoundTrip against the
// official Go SDK's server: a JSON answer comes back from the call that
// sent the request and never again on Read; an event-stream answer comes
// on Read, as Write delivers it.

package mcphttp

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

const rtInitialize = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}`

// roundTrip sends one request by RoundTrip; when the answer did not come
// back with it, it is the next message on Read.
func roundTrip(ctx context.Context, t *testing.T, conn *StreamableConn, id, method, params string) (answer *jsonrpc.Message, direct bool) {
	t.Helper()
	m, ok, err := conn.RoundTrip(ctx, &jsonrpc.Message{ID: jsonrpc.ID(id), Method: method, Params: []byte(params)})
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if !ok {
		if m, err = conn.Read(ctx); err != nil {
			t.Fatalf("%s: reading the answer: %v", method, err)
		}
	}
	if string(m.ID) != id || m.Kind() != jsonrpc.KindResult {
		t.Fatalf("%s: answer id %s kind %v: %s", method, m.ID, m.Kind(), m.Result)
	}
	return m, ok
}

func TestRoundTripReturnsAJSONAnswerAndLeavesAStreamedOneToRead(t *testing.T) {
	for _, mode := range []struct {
		name string
		json bool
	}{{"JSON answers come back at once", true}, {"event-stream answers arrive on Read", false}} {
		t.Run(mode.name, func(t *testing.T) {
			testkit.LeakCheck(t)
			ctx := testkit.Context(t)
			p := newSDKStreamablePeer(t, &sdk.StreamableHTTPOptions{JSONResponse: mode.json})
			conn, err := DialStreamable(ctx, p.http.URL, ClientOptions{HTTPClient: p.http.Client()})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()

			if _, direct := roundTrip(ctx, t, conn, "1", "initialize", rtInitialize); direct != mode.json {
				t.Errorf("initialize answered at once: %v", direct)
			}
			if conn.SessionID() == "" {
				t.Fatal("no session id adopted from the initialize answer")
			}
			// The revision is learnt from the answer to initialize.
			conn.mu.Lock()
			version := conn.version
			conn.mu.Unlock()
			if version != mcp.Version20251125 {
				t.Errorf("the connection's revision after initialize is %q, want %s", version, mcp.Version20251125)
			}
			if err := conn.Write(ctx, &jsonrpc.Message{Method: "notifications/initialized"}); err != nil {
				t.Fatal(err)
			}
			m, direct := roundTrip(ctx, t, conn, "2", "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`)
			if direct != mode.json {
				t.Errorf("tools/call answered at once: %v", direct)
			}
			if !strings.Contains(string(m.Result), `"echo: hi"`) {
				t.Errorf("result = %s", m.Result)
			}
			// Whatever RoundTrip returned is not also queued: the next
			// message on Read answers the next request.
			if err := conn.Write(ctx, &jsonrpc.Message{ID: jsonrpc.ID("3"), Method: "ping"}); err != nil {
				t.Fatal(err)
			}
			next, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if string(next.ID) != "3" {
				t.Errorf("next message on Read = %+v, want the answer to ping (id 3)", next)
			}
		})
	}
}
