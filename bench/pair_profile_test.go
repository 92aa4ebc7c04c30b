// pair_profile_test.go holds the Postgres pair in one process, for pprof
// of its COPY out: a real PostgreSQL (skipped without one), mcpgate
// proxy's --postgres-listen side and the gateway's side (wiremcp) joined
// by a framed connection, and pgx as the program's driver:
//
//	go test ./bench -run '^$' -bench PostgresPairCopyOut -benchtime 20x \
//	    -cpuprofile cpu.out
//	go tool pprof -top cpu.out

package main

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/wiremcp"
)

func BenchmarkPostgresPairCopyOut(b *testing.B) {
	const mb = 32
	ctx := context.Background()
	pg, stopPG, err := peers.RunPostgres()
	if errors.Is(err, peers.ErrNoPostgres) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer stopPG()
	srv, url := fixtureProxy(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() { _ = srv.ServePostgres(ln) }()
	gw, err := wiremcp.Dial(ctx, url, wiremcp.DialOptions{Name: "bench", Postgres: func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", pg.Addr)
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()

	setup, err := pgx.Connect(ctx, pairURL(pg, pg.Addr))
	if err != nil {
		b.Fatal(err)
	}
	defer setup.Close(ctx)
	if _, err := copyIntoPairTable(ctx, setup, "copy_out", mb); err != nil {
		b.Fatal(err)
	}
	for _, way := range []struct{ name, addr string }{{"direct", pg.Addr}, {"pair", ln.Addr().String()}} {
		b.Run(way.name, func(b *testing.B) {
			c, err := pgx.Connect(ctx, pairURL(pg, way.addr))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(ctx)
			b.SetBytes(mb << 20)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := copyOut(ctx, c, "copy_out"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
