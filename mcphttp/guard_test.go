// guard_test.go pins the DNS-rebinding guard over a real socket: a Host or
// Origin that is not loopback (or on the allow-lists) is refused with 403
// before anything is parsed, and loopback in every spelling passes. The
// requests are the conformance suite's dns-rebinding-protection scenario:
// a fresh initialize with the Host and Origin under test.

package mcphttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/fixture"
)

func TestGuard(t *testing.T) {
	stLeakCheck(t)
	h := NewHandler(fixture.New(fixture.Options{}), Options{})
	plain := httptest.NewServer(Guard(h, GuardOptions{}))
	t.Cleanup(plain.Close)
	allowing := httptest.NewServer(Guard(h, GuardOptions{
		AllowedHosts:   []string{"mcp.example.com", "pinned.example.com:8443"},
		AllowedOrigins: []string{"https://app.example.com"},
	}))
	t.Cleanup(allowing.Close)
	t.Cleanup(h.Close)
	port := plain.Listener.Addr().String()[strings.LastIndexByte(plain.Listener.Addr().String(), ':')+1:]
	self := "127.0.0.1:" + port

	const body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"conformance-dns-rebinding-test","version":"1.0.0"}}}`
	type row struct {
		name     string
		srv      *httptest.Server
		host     string // "" keeps the address dialled
		origin   string
		contType string // "" for application/json
		status   int
	}
	rows := []row{
		{name: "Host evil.example.com is 403", srv: plain, host: "evil.example.com", status: 403},
		{name: "Host and Origin evil.example.com is 403", srv: plain, host: "evil.example.com", origin: "http://evil.example.com", status: 403},
		{name: "Origin http://evil.example.com on a loopback Host is 403", srv: plain, origin: "http://evil.example.com", status: 403},
		{name: "Origin null is 403", srv: plain, origin: "null", status: 403},
		{name: "Origin with another scheme is 403", srv: plain, origin: "file://localhost", status: 403},
		{name: "Host that only starts like localhost is 403", srv: plain, host: "localhost.evil.example.com", status: 403},
		{name: "Host that only ends like a loopback address is 403", srv: plain, host: "127.0.0.1.nip.io:" + port, status: 403},
		{name: "the refusal comes before any parsing", srv: plain, host: "evil.example.com", contType: "text/plain", status: 403},
		{name: "Host 127.0.0.1:port passes", srv: plain, host: self, status: 200},
		{name: "Host and Origin 127.0.0.1:port pass", srv: plain, host: self, origin: "http://" + self, status: 200},
		{name: "Host localhost passes", srv: plain, host: "localhost", status: 200},
		{name: "Host LOCALHOST:port passes", srv: plain, host: "LOCALHOST:" + port, status: 200},
		{name: "Host [::1]:port passes", srv: plain, host: "[::1]:" + port, status: 200},
		{name: "Host [::1] passes", srv: plain, host: "[::1]", status: 200},
		{name: "Host of another loopback address passes", srv: plain, host: "127.0.0.2:" + port, status: 200},
		{name: "Origin http://localhost:3000 passes", srv: plain, origin: "http://localhost:3000", status: 200},
		{name: "Origin https://[::1]:8443 passes", srv: plain, origin: "https://[::1]:8443", status: 200},
		{name: "AllowedHosts extends the Host list", srv: allowing, host: "mcp.example.com", status: 200},
		{name: "an allowed host name allows it on any port", srv: allowing, host: "mcp.example.com:8443", status: 200},
		{name: "an allowed host:port allows that port", srv: allowing, host: "pinned.example.com:8443", status: 200},
		{name: "an allowed host:port allows no other port", srv: allowing, host: "pinned.example.com:9999", status: 403},
		{name: "AllowedHosts does not allow other hosts", srv: allowing, host: "evil.example.com", status: 403},
		{name: "AllowedHosts keeps loopback allowed", srv: allowing, host: "localhost:" + port, status: 200},
		{name: "AllowedOrigins extends the Origin list", srv: allowing, origin: "https://app.example.com", status: 200},
		{name: "an allowed origin allows no other port", srv: allowing, origin: "https://app.example.com:444", status: 403},
		{name: "an allowed origin allows no other scheme", srv: allowing, origin: "http://app.example.com", status: 403},
		{name: "AllowedOrigins keeps loopback origins allowed", srv: allowing, origin: "http://127.0.0.1:5173", status: 200},
		{name: "AllowedOrigins does not allow other origins", srv: allowing, origin: "http://evil.example.com", status: 403},
	}
	allowed := 0
	for _, tc := range rows {
		if tc.status == 200 {
			allowed++
		}
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(stContext(t), http.MethodPost, tc.srv.URL+"/mcp", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = stHeaders("")
			if tc.contType != "" {
				req.Header.Set("Content-Type", tc.contType)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := tc.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.status == 403 && resp.Header.Get(HeaderSessionID) != "" {
				t.Error("a refused request opened a session")
			}
			if tc.status == 200 && resp.Header.Get(HeaderSessionID) == "" {
				t.Errorf("an allowed initialize opened no session: %s", b)
			}
		})
	}
	if got := h.Sessions(); got != allowed {
		t.Errorf("Sessions = %d, want %d (one per allowed initialize, none per refusal)", got, allowed)
	}
}
