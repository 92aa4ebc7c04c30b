// profile_test.go holds the relay in one process, for pprof: the fixture
// over Streamable HTTP, mcpgate's gateway in front of it as an http
// backend (no prefix, a service token, audit on, as the harness runs it),
// and the harness's own client, parallel. It is how the hot spots in
// docs/benchmarks.md were found:
//
//	go test ./bench -run '^$' -bench RelayHTTPBackend -benchtime 5s \
//	    -cpuprofile cpu.out -memprofile mem.out
//	go tool pprof -top cpu.out

package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func BenchmarkRelayHTTPBackend(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	backendHandler := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{})
	defer backendHandler.Close()
	// Connections the relay opened to the backend: a relay that keeps
	// them alive opens one per concurrent call, not one per call.
	var dials atomic.Int64
	backend := httptest.NewUnstartedServer(backendHandler)
	backend.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	backend.Start()
	defer backend.Close()

	dir := b.TempDir()
	cfg, err := config.Parse(fmt.Appendf(nil, "listen: 127.0.0.1:0\nstore: %q\nbackends:\n%s", filepath.Join(dir, "db"), httpBackendYAML(backend.URL)))
	if err != nil {
		b.Fatal(err)
	}
	st, err := sqlite.Open(ctx, cfg.Store)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	gw, err := gateway.New(ctx, cfg, gateway.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); gw.Run(runCtx) }()
	defer func() {
		stop()
		<-done
		_ = gw.Close(context.Background())
	}()
	secret, _, err := gw.Tokens().Create(ctx, "bench", "admin", time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	front := httptest.NewServer(gw.Handler())
	defer front.Close()
	hc := newHTTPClient(64)
	defer hc.CloseIdleConnections()
	open := sessionFactory(hc, front.URL+"/mcp", secret)
	if c, err := firstAnswer(ctx, open, readyTimeout, 20*time.Millisecond); err != nil {
		b.Fatal(err)
	} else {
		c.close(ctx)
	}

	b.ReportAllocs()
	dialsBefore := dials.Load()
	b.SetParallelism(8) // 8 × GOMAXPROCS callers: 16 on the 2-core machine, as in the harness
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c, err := open(ctx)
		if err != nil {
			b.Error(err)
			return
		}
		defer c.close(ctx)
		for pb.Next() {
			if err := c.call(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(dials.Load()-dialsBefore)/float64(b.N), "backend-dials/op")
}

// BenchmarkWireFramed64 holds the fixture, mcpgate proxy in front of it
// and 64 callers on channels of one framed connection in one process,
// for pprof of the wire path.
func BenchmarkWireFramed64(b *testing.B) {
	ctx := context.Background()
	_, url := fixtureProxy(b)
	f, err := dialFramed(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer f.close()
	c := framedCaller{f: f}
	b.ReportAllocs()
	b.SetParallelism(32) // 64 callers on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.call(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// fixtureProxy serves an in-process mcpgate proxy in front of the fixture
// over Streamable HTTP until b ends; url is its ws:// address.
func fixtureProxy(b *testing.B) (srv *proxy.Server, url string) {
	backendHandler := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{})
	b.Cleanup(backendHandler.Close)
	backend := httptest.NewServer(backendHandler)
	b.Cleanup(backend.Close)
	up, err := proxy.NewUpstream(proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: backend.URL})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = up.Close() })
	srv = proxy.NewServer(proxy.Options{Upstream: up, InfoPath: filepath.Join(b.TempDir(), "none")})
	front := httptest.NewServer(srv)
	b.Cleanup(front.Close)
	return srv, "ws" + strings.TrimPrefix(front.URL, "http")
}
