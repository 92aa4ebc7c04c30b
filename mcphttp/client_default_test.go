// client_default_test.go pins that client Conns on the default HTTP
// client leave no connection open once the last of them has closed.

package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

func TestLastConnOnTheDefaultClientClosesItsIdleConnections(t *testing.T) {
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
		// The POST's connection then stays idle in the default client.
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
