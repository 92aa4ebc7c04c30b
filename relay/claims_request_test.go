// claims_request_test.go pins Claims.OwnerOfRequest, the owner lookup the
// gateway's middlewares make with the request's kept entry name: it names
// the same backend as OwnerOf, live or down, and none for other methods.

package relay_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/relay"
)

func TestOwnerOfRequestNamesTheBackendOwnerOfNames(t *testing.T) {
	claims := relay.NewClaims()
	f := frontWithClaims(t, claims)
	bs := newBackendServer(t, "b1", 0)
	b := relay.New("b1", connect(t, bs.Server), relay.Options{Claims: claims})
	must(t, b.Sync(context.Background(), f.Server))

	check := func(state string) {
		t.Helper()
		for _, c := range tombCalls {
			r := &mcp.Request{Method: c[0], Params: json.RawMessage(c[1])}
			if got, want := claims.OwnerOfRequest(r), claims.OwnerOf(c[0], []byte(c[1])); got != "b1" || got != want {
				t.Errorf("%s: OwnerOfRequest(%s %s) = %q, OwnerOf = %q, want b1", state, c[0], c[1], got, want)
			}
		}
		for _, c := range [][2]string{{"tools/call", `{"name":"nobody"}`}, {"ping", `{"name":"b1__echo"}`}} {
			if got := claims.OwnerOfRequest(&mcp.Request{Method: c[0], Params: json.RawMessage(c[1])}); got != "" {
				t.Errorf("%s: OwnerOfRequest(%s %s) = %q, want none", state, c[0], c[1], got)
			}
		}
	}
	check("live")
	b.Down(f.Server)
	check("down")
}
