package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func benchEcho(s *mcp.Server) {
	_ = s.AddTools(&mcp.Tool{Name: "echo", Description: "Echoes its text",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			text, _ := jsonrpc.LookupString(args, "text")
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}})
		}})
}

// BenchmarkGatewayToolsCall measures one tools/call through the whole
// access-control stack — bearer token, gate, rate limit, audit record —
// against the same tool on the bare engine, over Streamable HTTP.
func BenchmarkGatewayToolsCall(b *testing.B) {
	small := json.RawMessage(`{"name":"echo","arguments":{"text":"hello"}}`)
	run := func(b *testing.B, url string, header http.Header, params json.RawMessage) {
		ctx := context.Background()
		conn, err := mcphttp.DialStreamable(ctx, url, mcphttp.ClientOptions{Header: header})
		if err != nil {
			b.Fatal(err)
		}
		c := mcp.NewClient(conn, mcp.ClientOptions{})
		defer c.Close()
		if _, err := c.Initialize(ctx); err != nil {
			b.Fatal(err)
		}
		// A relayed tool is listed once its backend has synced.
		testkit.WaitFor(b, "the echo tool listed", func() bool {
			res, err := c.Call(ctx, "tools/list", nil)
			return err == nil && bytes.Contains(res, []byte(`"echo"`))
		})
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := c.Call(ctx, "tools/call", params); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bare-engine", func(b *testing.B) {
		s := mcp.NewServer(mcp.Options{})
		benchEcho(s)
		h := mcphttp.NewHandler(s, mcphttp.Options{})
		defer h.Close()
		ts := httptest.NewServer(h)
		defer ts.Close()
		run(b, ts.URL, nil, small)
	})
	gatewayRow := func(b *testing.B, extra string) {
		ctx := context.Background()
		cfg, _ := config.Parse([]byte("listen: 127.0.0.1:0\nrate_limits: {default: {rate: 1000000, burst: 1000000}}\n" + extra))
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		gw, err := gateway.New(ctx, cfg, gateway.Options{Store: st, Catalogue: benchEcho})
		if err != nil {
			b.Fatal(err)
		}
		defer gw.Close(ctx)
		secret, _, err := gw.Tokens().Create(ctx, "bench", "viewer", time.Time{})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(gw.Handler())
		defer ts.Close()
		run(b, ts.URL+"/mcp", http.Header{"Authorization": {"Bearer " + secret}}, small)
	}
	// The default: every answer waits for its audit record's commit (one
	// SQLite transaction per call when calls come one at a time).
	b.Run("gateway", func(b *testing.B) { gatewayRow(b, "") })
	b.Run("gateway-audit-async", func(b *testing.B) { gatewayRow(b, "audit: {async: true}\n") })
	// The relayed call: the same tool on a backend MCP server (the bare
	// engine over Streamable HTTP) behind the gateway. What this row
	// allocates beyond the two above is the relay's share.
	// The relayed call, the backend shared, or per_user with each
	// caller's stored key (read from the store and opened on every call,
	// on an upstream session of the caller's own).
	// With oauth, the backend names an authorization server in its
	// resource metadata (it checks no token: the gateway's cost is what
	// is measured), and the caller authorizes it once, as a person does.
	relayed := func(b *testing.B, identity string, store func(ctx context.Context, gw *gateway.Gateway, tokenID string), params json.RawMessage) {
		ctx := context.Background()
		s := mcp.NewServer(mcp.Options{})
		benchEcho(s)
		h := mcphttp.NewHandler(s, mcphttp.Options{})
		defer h.Close()
		is := oauthtest.New(b, "")
		mux := http.NewServeMux()
		backend := httptest.NewServer(mux)
		defer backend.Close()
		mux.Handle("/", h)
		mux.HandleFunc("GET /.well-known/oauth-protected-resource", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"resource":"`+backend.URL+`","authorization_servers":["`+is.ID+`"]}`)
		})
		b.Setenv("MCPGATE_BENCH_VAULT_KEY", strings.Repeat("7e", 32))
		cfg, err := config.Parse([]byte("listen: 127.0.0.1:0\nrate_limits: {default: {rate: 1000000, burst: 1000000}}\n" +
			"vault: {key_from: MCPGATE_BENCH_VAULT_KEY}\noutbound: {allow_hosts: [127.0.0.1]}\n" +
			"backends: [{name: b, kind: http, url: \"" + backend.URL + "\", prefix: \"-\"" + identity + "}]\n"))
		if err != nil {
			b.Fatal(err)
		}
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		gw, err := gateway.New(ctx, cfg, gateway.Options{Store: st})
		if err != nil {
			b.Fatal(err)
		}
		defer gw.Close(ctx)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); gw.Run(runCtx) }()
		defer func() { cancel(); <-done }()
		secret, rec, err := gw.Tokens().Create(ctx, "bench", "viewer", time.Time{})
		if err != nil {
			b.Fatal(err)
		}
		if store != nil {
			store(ctx, gw, rec.ID)
		}
		ts := httptest.NewServer(gw.Handler())
		defer ts.Close()
		gw.Listening(strings.TrimPrefix(ts.URL, "http://"))
		if strings.Contains(identity, "oauth") {
			benchAuthorize(b, ts.URL, secret)
		}
		run(b, ts.URL+"/mcp", http.Header{"Authorization": {"Bearer " + secret}}, params)
	}
	b.Run("relayed-http", func(b *testing.B) { relayed(b, "", nil, small) })
	// A large answer (64 KiB of text, echoed): what reading a relayed
	// result's members costs shows here.
	big := json.RawMessage(`{"name":"echo","arguments":{"text":"` + strings.Repeat("lorem ipsum ", 64<<10/12) + `"}}`)
	b.Run("relayed-http-64k", func(b *testing.B) { relayed(b, "", nil, big) })
	b.Run("relayed-http-per-user-vault", func(b *testing.B) {
		relayed(b, ", identity: per_user, credential: {vault: {header: X-Api-Key}}", func(ctx context.Context, gw *gateway.Gateway, id string) {
			if err := gw.Credentials().Set(ctx, id, "b", "sk-bench"); err != nil {
				b.Fatal(err)
			}
		}, small)
	})
	b.Run("relayed-http-per-user-oauth", func(b *testing.B) { relayed(b, ", identity: per_user, credential: {oauth: {}}", nil, small) })
}

// benchAuthorize has the holder of secret authorize backend b of the
// gateway at base, as a person does from My credentials.
func benchAuthorize(b *testing.B, base, secret string) {
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.PostForm(base+"/admin/login", url.Values{"token": {secret}})
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	resp, err = browser.Get(base + "/admin/credentials/authorize?backend=b")
	if err != nil {
		b.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "acts as you now") {
		b.Fatalf("the authorization: %d\n%s", resp.StatusCode, page)
	}
}
