// instructions_test.go pins that the backends' instructions reach the
// gateway's clients at initialize: one backend's as they are, several
// under each backend's name in the configuration's order; and only to a
// caller who sees at least one of that backend's entries, in both eras
// (initialize and server/discover).

package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// inBackend serves one tool, find, with instructions over HTTP.
func inBackend(t *testing.T, instructions string) string {
	t.Helper()
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "in", Version: "1"}, Instructions: instructions})
	if err := s.AddTools(&mcp.Tool{Name: "find", SkipValidation: true,
		Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"content":[]}`), nil
		}}); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(s, mcphttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); h.Close() })
	return srv.URL
}

func TestBackendInstructionsReachTheClient(t *testing.T) {
	testkit.LeakCheck(t)
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

// A backend's instructions describe its tools: a caller who may see none
// of its entries reads none of them, at initialize (2025) or at
// server/discover (2026-07-28); one who sees an entry reads them.
func TestInstructionsReachOnlyThoseWhoSeeTheBackend(t *testing.T) {
	open, closed := inBackend(t, "Open to all."), inBackend(t, "The admins' secret runbook.")
	e := gwStart(t, fmt.Sprintf("listen: 127.0.0.1:0\nbackends:\n  - {name: pub, kind: http, url: %q}\n"+
		"  - {name: ops, kind: http, url: %q, min_roles: [{kind: tool, name: '*', role: admin}]}\n", open, closed))
	bkRun(t, e.gw)
	bkWaitReady(t, e.base, http.StatusOK)
	viewer, _ := e.token("v", "viewer")
	admin, _ := e.token("a", "admin")
	const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, tt := range []struct {
		who, secret string
		want        string
	}{
		{"viewer", viewer, "## pub\n\nOpen to all."},
		{"admin", admin, "## pub\n\nOpen to all.\n\n## ops\n\nThe admins' secret runbook."},
	} {
		for era, body := range map[string]string{"initialize": gwInitializeBody, "server/discover": discover} {
			req, _ := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, e.base+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", gwBearer(tt.secret))
			if era == "server/discover" {
				req.Header.Set(mcphttp.HeaderProtocolVersion, "2026-07-28")
				req.Header.Set(mcphttp.HeaderMethod, "server/discover")
			}
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if i := bytes.Index(raw, []byte("data: ")); i >= 0 { // an event stream's one message
				raw = bytes.TrimSpace(raw[i+len("data: "):])
			}
			m, err := jsonrpc.Parse(raw)
			if resp.StatusCode != http.StatusOK || err != nil || m.Result == nil {
				t.Fatalf("%s by the %s: %d %s", era, tt.who, resp.StatusCode, raw)
			}
			if got, _ := jsonrpc.LookupString(m.Result, "instructions"); got != tt.want {
				t.Errorf("%s by the %s: instructions %q, want %q", era, tt.who, got, tt.want)
			}
		}
	}
}
