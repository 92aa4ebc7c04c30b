// pairs.go measures the wire's Postgres pair: the same COPY into a real
// PostgreSQL (peers.RunPostgres), and the same COPY of that table out, in
// the same run. Once each goes over a
// direct loopback connection. Once it goes through the pair: the driver
// connected to an `mcpgate proxy`'s --postgres-listen, the bytes over the
// framed wire, and the gateway's side (package wiremcp, in this process)
// dialling the database. Without PostgreSQL installed the figure is
// reported as not run.

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// pairResult is the COPY's throughput each way, medians of the repeats:
// into the database, and out of it (COPY … TO STDOUT, as psql's \copy).
type pairResult struct {
	MB         int       `json:"mb"`
	Repeats    int       `json:"repeats"`
	DirectMBps float64   `json:"direct_mb_per_sec"`
	PairMBps   float64   `json:"pair_mb_per_sec"`
	EachDirect []float64 `json:"each_direct"`
	EachPair   []float64 `json:"each_pair"`

	DirectOutMBps float64   `json:"direct_out_mb_per_sec"`
	PairOutMBps   float64   `json:"pair_out_mb_per_sec"`
	EachDirectOut []float64 `json:"each_direct_out"`
	EachPairOut   []float64 `json:"each_pair_out"`
}

const (
	pairRowBytes = 8 << 10
	pairRepeats  = 5
)

func (e *env) postgresPair(ctx context.Context, mb int) (*pairResult, error) {
	pg, stop, err := peers.RunPostgres()
	if errors.Is(err, peers.ErrNoPostgres) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer stop()
	var addr, pgListen string
	if _, err := onFreshAddrs(func() (*target, error) {
		a, err := freeAddrs(2)
		if err != nil {
			return nil, err
		}
		addr, pgListen = a[0], a[1]
		t := &target{name: "proxy-pair", open: func(ctx context.Context) (caller, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", pgListen)
			if err != nil {
				return nil, err
			}
			_ = c.Close()
			return perPathCaller{base: "ws://" + addr}, nil
		}}
		return t, e.start(ctx, t, "proxy-pair", nil, e.mcpgate, "proxy", "--listen", addr, "--upstream", e.backend,
			"--info", filepath.Join(e.dir, "no-DIVERGE.md"), "--postgres-listen", pgListen, "--daemon-listen=")
	}); err != nil {
		return nil, err
	}
	gw, err := wiremcp.Dial(ctx, "ws://"+addr, wiremcp.DialOptions{Name: "bench", Postgres: func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", pg.Addr)
	}})
	if err != nil {
		return nil, fmt.Errorf("the gateway's side of the pair: %w", err)
	}
	defer gw.Close()
	res := &pairResult{MB: mb, Repeats: pairRepeats}
	copyOnce := func(via string, n int) (in, out float64, err error) {
		c, err := pgx.Connect(ctx, pairURL(pg, via))
		if err != nil {
			return 0, 0, err
		}
		defer c.Close(ctx)
		table := fmt.Sprintf("copy_%d", n)
		if in, err = copyIntoPairTable(ctx, c, table, mb); err != nil {
			return 0, 0, err
		}
		start := time.Now()
		got, rows, err := copyOut(ctx, c, table)
		if want := int64(mb << 20 / pairRowBytes); err != nil || rows != want {
			return 0, 0, fmt.Errorf("COPY out: %d of %d rows: %v", rows, want, err)
		}
		out = float64(got) / (1 << 20) / time.Since(start).Seconds()
		return in, out, nil
	}
	n := 0
	for range pairRepeats { // interleaved, so that neither way always runs first
		for _, way := range []struct {
			via     string
			in, out *[]float64
		}{{pg.Addr, &res.EachDirect, &res.EachDirectOut}, {pgListen, &res.EachPair, &res.EachPairOut}} {
			n++
			in, out, err := copyOnce(way.via, n)
			if err != nil {
				return nil, err
			}
			*way.in, *way.out = append(*way.in, in), append(*way.out, out)
		}
	}
	res.DirectMBps, res.PairMBps = medianOf(res.EachDirect), medianOf(res.EachPair)
	res.DirectOutMBps, res.PairOutMBps = medianOf(res.EachDirectOut), medianOf(res.EachPairOut)
	return res, nil
}

// pairURL is the database of pg as reached at addr: directly, or through
// the pair's listener.
func pairURL(pg peers.Postgres, addr string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pg.User, addr, pg.DB)
}

// copyIntoPairTable creates table (unlogged) on c and COPYs mb MB into it
// in rows of pairRowBytes; it returns the COPY's MB/s.
func copyIntoPairTable(ctx context.Context, c *pgx.Conn, table string, mb int) (float64, error) {
	rows := mb << 20 / pairRowBytes
	if _, err := c.Exec(ctx, "CREATE UNLOGGED TABLE "+table+" (id int, body text)"); err != nil {
		return 0, err
	}
	body := strings.Repeat("p", pairRowBytes-16)
	start := time.Now()
	got, err := c.CopyFrom(ctx, pgx.Identifier{table}, []string{"id", "body"}, pgx.CopyFromSlice(rows, func(i int) ([]any, error) {
		return []any{i, body}, nil
	}))
	if err != nil || got != int64(rows) {
		return 0, fmt.Errorf("COPY: %d of %d rows: %v", got, rows, err)
	}
	return float64(mb) / time.Since(start).Seconds(), nil
}

// copyOut COPYs table out of c (TO STDOUT, as psql's \copy) and keeps
// nothing of it; it returns the bytes and the rows that came.
func copyOut(ctx context.Context, c *pgx.Conn, table string) (bytes, rows int64, err error) {
	var sink countingWriter
	tag, err := c.PgConn().CopyTo(ctx, &sink, "COPY "+table+" TO STDOUT")
	if err != nil {
		return 0, 0, fmt.Errorf("COPY out: %w", err)
	}
	return sink.n, tag.RowsAffected(), nil
}

// countingWriter counts what is written to it, and keeps nothing.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
