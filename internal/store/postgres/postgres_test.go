package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// A journal's mark moves in the transaction that writes its records: a
// batch the server refuses (a NUL in a text column) moves neither. Without
// a journal folder the store keeps no journal; with one, the folder is
// made.
func TestAuditJournalMarkMovesWithItsRecords(t *testing.T) {
	ctx := context.Background()
	url := freshDB(t)
	if st := openStore(t, url); st.AuditJournal() != "" {
		t.Fatalf("AuditJournal without a folder = %q, want none", st.AuditJournal())
	}
	dir := t.TempDir() + "/journal"
	st, err := postgres.Open(ctx, url, postgres.Options{JournalDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.AuditJournal() != dir+"/mcpgate-audit" {
		t.Fatalf("AuditJournal = %q", st.AuditJournal())
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the journal folder: %v %v", fi, err)
	}
	rec := func(name string) store.AuditRecord {
		return store.AuditRecord{Time: time.Unix(1, 0), Subject: "s", Role: "admin", Kind: "tool", Name: name, Backend: "b", Outcome: "ok"}
	}
	mark := func() uint64 {
		t.Helper()
		m, err := st.AuditJournalMark(ctx, "j1")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := mark(); m != 0 {
		t.Fatalf("a new journal's mark = %d", m)
	}
	if err := st.AppendAuditThrough(ctx, []store.AuditRecord{rec("a"), rec("b")}, "j1", 2); err != nil {
		t.Fatal(err)
	}
	many := make([]store.AuditRecord, 40) // COPY, past auditCopyFrom
	for i := range many {
		many[i] = rec(fmt.Sprint("c", i))
	}
	if err := st.AppendAuditThrough(ctx, many, "j1", 42); err != nil {
		t.Fatal(err)
	}
	if m := mark(); m != 42 {
		t.Fatalf("mark = %d, want 42", m)
	}
	// A record the database refuses: every store's text is Storable, so
	// a constraint of the test's own does the refusing.
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `ALTER TABLE audit ADD CONSTRAINT refused CHECK (name NOT LIKE 'refused%')`); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]store.AuditRecord{{rec("d"), rec("refused e")}, append(many[:39:39], rec("refused f"))} {
		if err := st.AppendAuditThrough(ctx, bad, "j1", 99); !errors.Is(err, store.ErrRefused) {
			t.Fatalf("a batch of %d with a refused record: %v, want store.ErrRefused", len(bad), err)
		}
	}
	if m := mark(); m != 42 {
		t.Fatalf("mark after refused batches = %d, want 42", m)
	}
	if recs, err := st.TailAudit(ctx, 1000); err != nil || len(recs) != 42 {
		t.Fatalf("records after refused batches: %d (%v), want 42", len(recs), err)
	}
	if err := st.ForgetAuditJournal(ctx, "j1"); err != nil {
		t.Fatal(err)
	}
	if m := mark(); m != 0 {
		t.Fatalf("mark after forgetting = %d", m)
	}
}

// Replicas write at once, so a record may take a lower id than another
// and commit after it. The live tail still shows it once: a page's head
// names the snapshot it was read in, not the last id it saw.
func TestLiveTailShowsARecordThatCommitsAfterAHigherID(t *testing.T) {
	ctx := context.Background()
	url := freshDB(t)
	st := openStore(t, url)
	rec := func(name string) store.AuditRecord {
		return store.AuditRecord{Time: time.Unix(1, 0), Subject: "s", Role: "admin", Kind: "tool", Name: name, Backend: "b", Outcome: "ok"}
	}
	names := func(p store.AuditPage) []string {
		var out []string
		for _, r := range p.Records {
			out = append(out, r.Name)
		}
		return out
	}
	tail := func(head string) store.AuditPage {
		t.Helper()
		p, err := st.QueryAudit(ctx, store.AuditQuery{NewerThan: head, Limit: store.MaxAuditPage})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	first, err := st.QueryAudit(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}

	// Another replica's transaction takes the next id and stays open.
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, store.AuditInsert(1, func(i int) string { return fmt.Sprint("$", i) }), store.AppendAuditValues(nil, rec("early"))...); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendAudit(ctx, []store.AuditRecord{rec("late")}); err != nil {
		t.Fatal(err)
	}
	p1 := tail(first.Head)
	if got := names(p1); len(got) != 1 || got[0] != "late" {
		t.Fatalf("first tail: %v, want [late]", got)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	p2 := tail(p1.Head)
	if got := names(p2); len(got) != 1 || got[0] != "early" {
		t.Fatalf("tail after the lower id committed: %v, want [early]", got)
	}
	if got := names(tail(p2.Head)); len(got) != 0 {
		t.Fatalf("a third tail: %v, want nothing (no record twice)", got)
	}
	// A head in the id form (a page read before this) still works.
	if got := names(tail("1.1")); len(got) != 1 {
		t.Fatalf("a tail from an id head: %v, want the one record of a greater id", got)
	}
}
