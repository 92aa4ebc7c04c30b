package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// One URL serves both eras unless told otherwise: a 2026-07-28
// server/discover is answered by default, and refused 400 with
// http.sessionless: false, while initialize works either way.
func TestTheGatewayServesBothErasByDefault(t *testing.T) {
	testkit.LeakCheck(t)
	const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	const initialize = `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(base, body string, modern bool) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if modern {
			req.Header.Set(mcphttp.HeaderProtocolVersion, "2026-07-28")
			req.Header.Set(mcphttp.HeaderMethod, "server/discover")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	for _, c := range []struct {
		yaml   string
		modern int
	}{{"", http.StatusOK}, {"http: {sessionless: false}\n", http.StatusBadRequest}} {
		base, _ := bkGateway(t, c.yaml)
		if status, body := post(base, discover, true); status != c.modern || (status == http.StatusOK && !strings.Contains(body, `"supportedVersions"`)) {
			t.Errorf("%q: server/discover %d %s, want %d", c.yaml, status, body, c.modern)
		}
		if status, body := post(base, initialize, false); status != http.StatusOK || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
			t.Errorf("%q: initialize %d %s", c.yaml, status, body)
		}
	}
}
