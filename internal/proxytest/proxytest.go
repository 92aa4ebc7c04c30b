// Package proxytest serves real `mcpgate proxy` servers for tests: in
// front of an engine server over Streamable HTTP, on loopback, killable as
// a crash would end them.
package proxytest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Upstream serves s over Streamable HTTP on a test server, in the 2025
// era only, and returns the proxy's upstream client for it; both are
// closed when tb ends, the upstream first.
func Upstream(tb testing.TB, s *mcp.Server) *proxy.Upstream {
	return serveUpstream(tb, s, mcphttp.Options{})
}

// Modern is Upstream with s serving 2026-07-28 beside the 2025 era: the
// proxy speaks 2026-07-28 to it.
func Modern(tb testing.TB, s *mcp.Server) *proxy.Upstream {
	return serveUpstream(tb, s, mcphttp.Options{Sessionless: true})
}

func serveUpstream(tb testing.TB, s *mcp.Server, o mcphttp.Options) *proxy.Upstream {
	tb.Helper()
	h := mcphttp.NewHandler(s, o)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fx := httptest.NewServer(mux)
	tb.Cleanup(func() { fx.Close(); h.Close() })
	up, err := proxy.NewUpstream(proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: fx.URL + "/mcp"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = up.Close() })
	return up
}

// Serve serves a proxy in front of up, with the DIVERGE.md at infoPath, on
// a loopback socket. It returns its ws:// URL, and a kill that ends it as a
// crash would: the listener and every connection closed at once, the
// hijacked WebSocket included. Killed when tb ends if not before.
func Serve(tb testing.TB, up *proxy.Upstream, infoPath string) (url string, kill func()) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	srv := &http.Server{Handler: proxy.NewServer(proxy.Options{Upstream: up, InfoPath: infoPath}),
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	var once sync.Once
	kill = func() {
		once.Do(func() {
			_ = srv.Close()
			mu.Lock()
			for _, c := range conns {
				_ = c.Close()
			}
			mu.Unlock()
			<-done
		})
	}
	tb.Cleanup(kill)
	return "ws://" + ln.Addr().String(), kill
}

// For serves a proxy in front of s, without a DIVERGE.md, and returns its
// ws:// URL; everything is closed when tb ends.
func For(tb testing.TB, s *mcp.Server) string {
	tb.Helper()
	url, _ := Serve(tb, Upstream(tb, s), filepath.Join(tb.TempDir(), "none"))
	return url
}
