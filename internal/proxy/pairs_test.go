package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// pgPair is a proxy with its database and daemon listeners, begun by a
// gateway connection (wiremcp) with the pairs o names.
type pgPair struct {
	srv    *Server
	driver string // the address the program's driver connects to
	daemon string // the URL the program dials for the Daemon pair
}

func servePairs(t *testing.T, o wiremcp.DialOptions) *pgPair {
	t.Helper()
	ctx := testCtx(t)
	logs := &logWatch{}
	srv := NewServer(Options{Upstream: fixtureUpstream(t, nil), Logger: logs.logger(), InfoPath: filepath.Join(t.TempDir(), "none")})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	listen := func(serve func(net.Listener) error) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan struct{})
		go func() { defer close(served); _ = serve(ln) }()
		t.Cleanup(func() { _ = ln.Close(); <-served })
		return ln.Addr().String()
	}
	p := &pgPair{srv: srv, driver: listen(srv.ServePostgres), daemon: "ws://" + listen(srv.ServeDaemons) + DaemonPath}
	o.Name = "pairs"
	c, err := wiremcp.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	logs.waitFor(t, ctx, "proxy: begun", 1)
	return p
}

func servePair(t *testing.T, dial func(context.Context) (net.Conn, error)) *pgPair {
	return servePairs(t, wiremcp.DialOptions{Postgres: dial})
}

// openPairs is how many of the program's connections the proxy holds.
func (p *pgPair) openPairs() int {
	p.srv.pairs.mu.Lock()
	defer p.srv.pairs.mu.Unlock()
	return len(p.srv.pairs.open)
}

// waitNoPairs waits until the proxy holds no pair: each ends on its own
// goroutines once its sockets close, and tells no one.
func (p *pgPair) waitNoPairs(t *testing.T, ctx context.Context) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for p.openPairs() != 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("%d pairs still held", p.openPairs())
		case <-tick.C:
		}
	}
}

func dialPG(addr string) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
}

// A real driver (pgx) behind the proxy reaches a real PostgreSQL through
// the pair: it creates a table, writes several MB with COPY and reads them
// back, and a bad statement's error arrives as the server sent it.
func TestThePostgresPairCarriesARealDriver(t *testing.T) {
	pg := peers.StartPostgres(t)
	p := servePair(t, dialPG(pg.Addr))
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pg.User, p.driver, pg.DB))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE blobs (id int PRIMARY KEY, body text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const rows, size = 2000, 4096 // 8 MB
	body := strings.Repeat("x", size-10)
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"blobs"}, []string{"id", "body"}, pgx.CopyFromSlice(rows, func(i int) ([]any, error) {
		return []any{i, fmt.Sprintf("%09d:%s", i, body)}, nil
	}))
	if err != nil || n != rows {
		t.Fatalf("COPY: %d rows, %v", n, err)
	}
	var count, total int64
	var last string
	if err := conn.QueryRow(ctx, `SELECT count(*), sum(length(body)), max(body) FROM blobs`).Scan(&count, &total, &last); err != nil {
		t.Fatal(err)
	}
	if count != rows || total != rows*int64(len(body)+10) || !strings.HasPrefix(last, fmt.Sprintf("%09d:", rows-1)) {
		t.Errorf("read back %d rows, %d bytes, last %.12q", count, total, last)
	}
	// And all of it back over the pair, row by row.
	got := 0
	rs, err := conn.Query(ctx, `SELECT id, body FROM blobs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var id int
		var b string
		if err := rs.Scan(&id, &b); err != nil || id != got || b != fmt.Sprintf("%09d:%s", id, body) {
			t.Fatalf("row %d: id %d, %v", got, id, err)
		}
		got++
	}
	if rs.Err() != nil || got != rows {
		t.Fatalf("read %d rows back: %v", got, rs.Err())
	}
	_, err = conn.Exec(ctx, `SELEC 1`)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42601" || !strings.Contains(pe.Message, `syntax error at or near "SELEC"`) {
		t.Errorf("bad SQL: %v, want the server's syntax error (42601)", err)
	}
	if _, err := conn.Exec(ctx, `SELECT 1`); err != nil {
		t.Errorf("the connection after the error: %v", err)
	}
}

// The database ending a connection mid-query (here the server itself
// terminates it) reaches the driver as the server said it, and the pair is
// let go: the proxy holds nothing for it.
func TestADatabaseThatGoesAwayMidQueryEndsThePair(t *testing.T) {
	pg := peers.StartPostgres(t)
	p := servePair(t, dialPG(pg.Addr))
	ctx := testCtx(t)
	dsn := fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pg.User, p.driver, pg.DB)
	victim, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close(ctx)
	pid := victim.PgConn().PID()
	killer, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close(ctx)
	queried := make(chan error, 1)
	go func() {
		_, err := victim.Exec(ctx, `SELECT pg_sleep(30)`)
		queried <- err
	}()
	// Terminate it once its query is running.
	for {
		var active bool
		if err := killer.QueryRow(ctx, `SELECT count(*) > 0 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'`, pid).Scan(&active); err != nil {
			t.Fatal(err)
		}
		if active {
			break
		}
	}
	if _, err := killer.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	err = <-queried
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57P01" {
		t.Errorf("the query of a terminated connection: %v, want the server's 57P01", err)
	}
	killer.Close(ctx)
	victim.Close(ctx)
	p.waitNoPairs(t, ctx) // the pairs end as their sockets close
}

// A thousand connections of the program, fifty at a time: each one is
// paired under an id of its own (never reused), answers, and is let go.
// (A hundred with -short: PostgreSQL starts each one's process.)
func TestAThousandDatabaseConnections(t *testing.T) {
	conns := 1000
	if testing.Short() {
		conns = 100
	}
	pg := peers.StartPostgres(t)
	p := servePair(t, dialPG(pg.Addr))
	// PostgreSQL starts a process for each connection: a thousand take
	// tens of seconds on a busy machine (the race detector, other
	// packages' tests), longer than testCtx allows.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dsn := fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", pg.User, p.driver, pg.DB)
	sem := make(chan struct{}, 50)
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(ctx)
			var n int
			if err := c.QueryRow(ctx, `SELECT $1::int`, i).Scan(&n); err != nil || n != i {
				errs <- fmt.Errorf("connection %d: %d, %v", i, n, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if next := p.srv.pairs.next.Load(); next != uint32(conns) {
		t.Errorf("%d ids minted for %d connections", next, conns)
	}
	p.waitNoPairs(t, ctx)
}

// With no database to pair with (the gateway declines), or before any
// gateway has begun, the driver's connection is closed: it fails at once.
func TestADeclinedDatabaseConnectionIsClosed(t *testing.T) {
	p := servePair(t, nil)
	ctx := testCtx(t)
	if c, err := pgx.Connect(ctx, "postgres://x@"+p.driver+"/x?sslmode=disable"); err == nil {
		c.Close(ctx)
		t.Fatal("a declined connection connected")
	}
	unreachable := servePair(t, dialPG(closedAddr(t)))
	if c, err := pgx.Connect(ctx, "postgres://x@"+unreachable.driver+"/x?sslmode=disable"); err == nil {
		c.Close(ctx)
		t.Fatal("a connection to a database the gateway cannot reach connected")
	}
}

func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
