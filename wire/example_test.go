// example_test.go is the package in a dozen lines a side: a server that
// begins a tools scope and answers tools/list on a channel, and a client
// that asks.

package wire_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/coder/websocket"

	"github.com/mcpgate/mcpgate/wire"
)

func Example() {
	// The server: Begun on the scope, then a result for every tools/list.
	served := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(served)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		_ = wire.Serve(r.Context(), ws, wire.HandlerFunc(func(ctx context.Context, rw *wire.Responder, p []byte) {
			if !rw.IsChannel() {
				_ = rw.Respond(wire.BeginAnswer{}.Append(nil))
				<-ctx.Done() // the begun scope stays open
				return
			}
			if _, ok := must(wire.DecodeChannelRequest(p)).(wire.McpListTools); ok {
				_ = rw.Respond(wire.Response{Result: []byte(`{"tools":[]}`)}.Append(nil))
			} // anything else: a bare finish
		}), nil)
	}))
	defer srv.Close()

	// The client.
	ctx := context.Background()
	c, err := wire.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/", nil)
	if err != nil {
		panic(err)
	}
	scope := must(c.Open(ctx, wire.BeginTools{Arguments: []byte(`{}`)}.Append(nil)))
	begun := must(wire.DecodeBeginAnswer(must(scope.Next(ctx))))
	ch := must(scope.OpenChannel(ctx, wire.McpListTools{}.Append(nil)))
	resp := must(wire.DecodeResponse(must(ch.Next(ctx))))
	fmt.Println(begun.Begun(), string(resp.Result))
	_ = c.Close()
	<-served
	// Output: true {"tools":[]}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
