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

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestGuard(t *testing.T) {
	testkit.LeakCheck(t)
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
			req, err := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, tc.srv.URL+"/mcp", strings.NewReader(body))
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

// An accepted Origin may read the answers of the CORS paths: its
// preflight is answered before authentication with the transports'
// methods and the headers MCP clients send (Mcp-* by prefix, never an
// unknown one), the answer exposes the session and authentication
// headers, and no credentials mode is granted. A refused Origin gets 403
// even for a preflight; other paths grant nothing.
func TestCORS(t *testing.T) {
	behind := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="x"`)
			http.Error(w, "no credential", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		w.WriteHeader(http.StatusOK)
	})
	srv := httptest.NewServer(Guard(behind, GuardOptions{AllowedOrigins: []string{"https://app.example.com"},
		CORSPaths: []string{"/mcp", "/.well-known/"}}))
	t.Cleanup(srv.Close)
	do := func(method, path, origin string, header http.Header) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		for k, v := range header {
			req.Header[k] = v
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	asks := http.Header{"Access-Control-Request-Method": {"POST"},
		"Access-Control-Request-Headers": {"authorization,content-type,mcp-protocol-version,mcp-session-id,mcp-param-region,x-evil"}}
	for _, c := range []struct {
		rule, method, path, origin string
		header                     http.Header
		status                     int
		allowOrigin, allowHeaders  string
		expose                     bool
	}{
		{"a loopback page's preflight is answered before authentication", "OPTIONS", "/mcp", "http://localhost:6274", asks,
			204, "http://localhost:6274", "authorization, content-type, mcp-protocol-version, mcp-session-id, mcp-param-region", false},
		{"a configured origin's preflight too", "OPTIONS", "/mcp", "https://app.example.com", asks, 204, "https://app.example.com",
			"authorization, content-type, mcp-protocol-version, mcp-session-id, mcp-param-region", false},
		{"a refused origin's preflight is 403", "OPTIONS", "/mcp", "http://evil.example.com", asks, 403, "", "", false},
		{"the answer names the origin and exposes the session header", "POST", "/mcp", "http://127.0.0.1:5173",
			http.Header{"Authorization": {"Bearer t"}}, 200, "http://127.0.0.1:5173", "", true},
		{"a 401 is readable, with its WWW-Authenticate", "POST", "/mcp", "http://127.0.0.1:5173", nil, 401, "http://127.0.0.1:5173", "", true},
		{"a prefix path", "GET", "/.well-known/oauth-protected-resource", "http://127.0.0.1:5173", nil, 401, "http://127.0.0.1:5173", "", true},
		{"a path outside the list grants nothing", "POST", "/admin/login", "http://127.0.0.1:5173", nil, 401, "", "", false},
		{"an exact path is not a prefix", "POST", "/mcpx", "http://127.0.0.1:5173", nil, 401, "", "", false},
		{"a preflight outside the list goes to the handler", "OPTIONS", "/admin/login", "http://127.0.0.1:5173", asks, 401, "", "", false},
		{"no Origin, no CORS", "POST", "/mcp", "", http.Header{"Authorization": {"Bearer t"}}, 200, "", "", false},
	} {
		t.Run(c.rule, func(t *testing.T) {
			resp := do(c.method, c.path, c.origin, c.header)
			h := resp.Header
			if resp.StatusCode != c.status || h.Get("Access-Control-Allow-Origin") != c.allowOrigin ||
				h.Get("Access-Control-Allow-Headers") != c.allowHeaders {
				t.Errorf("%d, allow-origin %q, allow-headers %q; want %d, %q, %q", resp.StatusCode,
					h.Get("Access-Control-Allow-Origin"), h.Get("Access-Control-Allow-Headers"), c.status, c.allowOrigin, c.allowHeaders)
			}
			if got := h.Get("Access-Control-Allow-Credentials"); got != "" {
				t.Errorf("Access-Control-Allow-Credentials: %q, want none", got)
			}
			exposed := h.Get("Access-Control-Expose-Headers")
			if c.expose != (strings.Contains(exposed, "Mcp-Session-Id") && strings.Contains(exposed, "WWW-Authenticate")) {
				t.Errorf("Access-Control-Expose-Headers: %q", exposed)
			}
			if c.allowOrigin != "" && !strings.Contains(h.Get("Vary"), "Origin") {
				t.Errorf("Vary: %q, want Origin", h.Get("Vary"))
			}
			if c.status == 204 && (!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
				!strings.Contains(h.Get("Access-Control-Allow-Methods"), "DELETE")) {
				t.Errorf("Access-Control-Allow-Methods: %q", h.Get("Access-Control-Allow-Methods"))
			}
		})
	}
}
