// instructions_test.go pins that the backends' instructions reach the
// gateway's clients at initialize: one backend's as they are, several
// under each backend's name in the configuration's order.

package gateway_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// inBackend serves an empty catalogue with instructions over HTTP.
func inBackend(t *testing.T, instructions string) string {
	t.Helper()
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "in", Version: "1"}, Instructions: instructions})
	h := mcphttp.NewHandler(s, mcphttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); h.Close() })
	return srv.URL
}

func TestBackendInstructionsReachTheClient(t *testing.T) {
	gwLeakCheck(t)
	one, two := inBackend(t, "Call zeta__find before zeta__read."), inBackend(t, "Everything here is read-only.")
	instructionsOf := func(yamlText string) string {
		base, _ := bkGateway(t, yamlText)
		bkWaitReady(t, base, http.StatusOK)
		res, _ := fdMember(t, (&fdHTTPFront{base: base}).exchange(t, 1, "initialize",
			`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`))
		s, _ := jsonrpc.LookupString([]byte(res), "instructions")
		return s
	}
	if got := instructionsOf(fmt.Sprintf("backends:\n  - {name: zeta, kind: http, url: %q}\n", one)); got != "Call zeta__find before zeta__read." {
		t.Errorf("one backend's instructions: %q", got)
	}
	got := instructionsOf(fmt.Sprintf("backends:\n  - {name: zeta, kind: http, url: %q}\n  - {name: alpha, kind: http, url: %q}\n", one, two))
	if want := "## zeta\n\nCall zeta__find before zeta__read.\n\n## alpha\n\nEverything here is read-only."; got != want {
		t.Errorf("two backends' instructions:\n%q\nwant\n%q", got, want)
	}
}
