package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/postgres"
	"github.com/mcpgate/mcpgate/internal/store/storetest"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// server is one PostgreSQL for the package's tests; each test gets a
// database of its own in it.
var (
	serverOnce sync.Once
	server     peers.Postgres
	stopServer func()
	serverErr  error
	dbCount    atomic.Int32
)

// freshDB creates an empty database and returns its URL.
func freshDB(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() {
		server, stopServer, serverErr = peers.RunPostgres()
		if serverErr == nil {
			testkit.AfterAll(stopServer) // after every round of -count and -cpu
		}
	})
	switch {
	case errors.Is(serverErr, peers.ErrNoPostgres):
		peers.StartPostgres(t) // skips, or fails when the peers are required
	case serverErr != nil:
		t.Fatal(serverErr)
	}
	name := fmt.Sprintf("store_%d", dbCount.Add(1))
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, server.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", server.User, server.Addr, name)
}

func openStore(t testing.TB, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The store contract, on a fresh PostgreSQL database each test.
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openStore(t, freshDB(t)) })

	// Two stores on one database — two replicas — see each other's
	// writes, and opening an up-to-date database migrates nothing.
	url := freshDB(t)
	a, b := openStore(t, url), openStore(t, url)
	ctx := context.Background()
	if err := a.CreateToken(ctx, storetest.Token("tok_shared", []byte("s"))); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Tokens(ctx); err != nil || len(got) != 1 || got[0].ID != "tok_shared" {
		t.Errorf("the second replica's tokens: %+v %v", got, err)
	}
	if err := b.RevokeToken(ctx, "tok_shared", storetest.Token("", nil).CreatedAt); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Tokens(ctx); len(got) != 1 || got[0].RevokedAt.IsZero() {
		t.Errorf("a revocation through one replica is not seen by the other: %+v", got)
	}

	// Replicas starting at once all migrate the same new database: the
	// advisory lock lets one do it, the others find it done.
	race := freshDB(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := postgres.Open(ctx, race, postgres.Options{MaxConns: 2})
			if err != nil {
				errs <- err
				return
			}
			_ = s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a concurrent open: %v", err)
	}

	// A database a newer mcpgate migrated is refused.
	newer := freshDB(t)
	openStore(t, newer).Close()
	conn, err := pgx.Connect(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `UPDATE schema_version SET version = version + 1`)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := postgres.Open(ctx, newer, postgres.Options{}); err == nil || !strings.Contains(err.Error(), "newer") {
		if s != nil {
			_ = s.Close()
		}
		t.Errorf("opening a newer schema: %v, want it refused", err)
	}

	// The password may come apart from the URL, and a URL that does not
	// parse is not quoted.
	if s, err := postgres.Open(ctx, url, postgres.Options{Password: "not-needed-with-trust"}); err != nil {
		t.Errorf("a password given apart: %v", err)
	} else {
		_ = s.Close()
	}
	if _, err := postgres.Open(ctx, "postgres://u:hunter2@[bad", postgres.Options{}); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a bad URL: %v", err)
	}
}
