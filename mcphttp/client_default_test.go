// client_default_test.go pins that a client Conn given no HTTP client
// makes its own and leaves no connection open once it has closed: there
// is no client shared by the process.

package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

func TestAConnThatMadeItsOwnClientClosesItsIdleConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted) // a notification needs no answer
	}))
	t.Cleanup(srv.Close)
	testkit.LeakCheck(t) // after the server: its listener may stay, no connection may
	ctx := testkit.Context(t)
	var conns []*StreamableConn
	for range 2 {
		c, err := DialStreamable(ctx, srv.URL, ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The POST's connection then stays idle in the Conn's client.
		if err := c.Write(ctx, &jsonrpc.Message{Method: "notifications/message", Params: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
