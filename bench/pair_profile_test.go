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
	"fmt"
	"net"
	"strings"
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

	setup, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pg.User, pg.Addr, pg.DB))
	if err != nil {
		b.Fatal(err)
	}
	defer setup.Close(ctx)
	rows := mb << 20 / pairRowBytes
	if _, err := setup.Exec(ctx, "CREATE UNLOGGED TABLE copy_out (id int, body text)"); err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("p", pairRowBytes-16)
	if _, err := setup.CopyFrom(ctx, pgx.Identifier{"copy_out"}, []string{"id", "body"}, pgx.CopyFromSlice(rows, func(i int) ([]any, error) {
		return []any{i, body}, nil
	})); err != nil {
		b.Fatal(err)
	}
	for _, way := range []struct{ name, addr string }{{"direct", pg.Addr}, {"pair", ln.Addr().String()}} {
		b.Run(way.name, func(b *testing.B) {
			c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pg.User, way.addr, pg.DB))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(ctx)
			b.SetBytes(mb << 20)
			b.ReportAllocs()
			for b.Loop() {
				var sink countingWriter
				if _, err := c.PgConn().CopyTo(ctx, &sink, "COPY copy_out TO STDOUT"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
