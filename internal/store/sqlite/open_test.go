// open_test.go pins what Open promises about the file: where and with which
// modes it is made, that the schema is migrated once however often it is
// opened, and that two Stores — two processes — share one file.

package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/store/storetest"
)

// openStore opens path and closes it when the test ends.
func openStore(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open %s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func dbPath(t testing.TB) string { return filepath.Join(t.TempDir(), "mcpgate.db") }

func TestOpenCreatesPrivateFileAndDirectories(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "state", "mcpgate", "mcpgate.db")
	s := openStore(t, path)
	// A write, so that the WAL file exists while the store is open.
	if err := s.AppendAudit(context.Background(), []store.AuditRecord{{Kind: "tool", Name: "t"}}); err != nil {
		t.Fatal(err)
	}
	modes := map[string]os.FileMode{
		filepath.Join(root, "state"):            0o700 | os.ModeDir,
		filepath.Join(root, "state", "mcpgate"): 0o700 | os.ModeDir,
		path:                                    0o600,
		path + "-wal":                           0o600,
	}
	for p, want := range modes {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
}

func TestOpenPathNeedingEscapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd?name#with%25.db")
	openStore(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not at the path asked for: %v", err)
	}
}

func TestOpenEmptyPathIsAnError(t *testing.T) {
	if _, err := sqlite.Open(context.Background(), ""); err == nil {
		t.Fatal("Open(\"\") succeeded")
	}
}

// schemaVersions reads the version table with a connection of its own.
func schemaVersions(t *testing.T, path string) []int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT version FROM schema_version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestMigrationsRunOnce(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	for i := range 3 {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatalf("open #%d: %v", i+1, err)
		}
		if err := s.CreateToken(ctx, storetest.Token("tok_"+strconv.Itoa(i), []byte{byte(i)})); err != nil {
			t.Fatalf("open #%d: %v", i+1, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := schemaVersions(t, path); len(got) != 1 || got[0] != sqlite.SchemaVersion {
		t.Fatalf("schema_version rows %v, want [%d]", got, sqlite.SchemaVersion)
	}
	toks, err := openStore(t, path).Tokens(ctx)
	if err != nil || len(toks) != 3 {
		t.Fatalf("tokens after three opens: %d, %v; a migration ran again?", len(toks), err)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := dbPath(t)
	if err := openStore(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := sqlite.Open(context.Background(), path); err == nil {
		s.Close()
		t.Fatal("a database from a newer mcpgate was opened")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Fatalf("error %v does not say why", err)
	}
}

func TestConcurrentOpensOfANewFile(t *testing.T) {
	path := dbPath(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := sqlite.Open(context.Background(), path)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := schemaVersions(t, path); len(got) != 1 || got[0] != sqlite.SchemaVersion {
		t.Fatalf("schema_version rows %v, want [%d]", got, sqlite.SchemaVersion)
	}
}

// The server and `mcpgate token revoke` hold the file at once: each sees
// the other's writes at once.
func TestSecondStoreSeesTheFirstsWrites(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	server, cli := openStore(t, path), openStore(t, path)

	if err := server.CreateToken(ctx, storetest.Token("tok_a", []byte("a"))); err != nil {
		t.Fatal(err)
	}
	toks, err := cli.Tokens(ctx)
	if err != nil || len(toks) != 1 || toks[0].ID != "tok_a" {
		t.Fatalf("second store sees %+v, %v", toks, err)
	}
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if err := cli.RevokeToken(ctx, "tok_a", at); err != nil {
		t.Fatal(err)
	}
	toks, err = server.Tokens(ctx)
	if err != nil || !toks[0].RevokedAt.Equal(at) {
		t.Fatalf("first store sees %+v, %v", toks, err)
	}
}

// helperEnv names the database a re-executed test binary appends to.
const helperEnv = "MCPGATE_SQLITE_HELPER_DB"

// TestHelperProcess is not a test: it is the other process of
// TestTwoProcessesWriteTheSameFile.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("run by TestTwoProcessesWriteTheSameFile")
	}
	s := openStore(t, path)
	for i := range helperBatches {
		if err := s.AppendAudit(context.Background(), batch("child", i)); err != nil {
			t.Fatal(err)
		}
	}
}

const helperBatches, helperBatchSize = 50, 10

func batch(who string, i int) []store.AuditRecord {
	out := make([]store.AuditRecord, helperBatchSize)
	for j := range out {
		out[j] = store.AuditRecord{Time: time.Now().UTC(), Subject: who, Kind: "tool", Name: fmt.Sprintf("%s-%d-%d", who, i, j), Outcome: "ok"}
	}
	return out
}

// Two processes writing at once both succeed: each waits for the other's
// lock instead of failing with SQLITE_BUSY.
func TestTwoProcessesWriteTheSameFile(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := openStore(t, path)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range helperBatches {
		if err := s.AppendAudit(ctx, batch("parent", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the other process failed: %v\n%s", err, out.String())
	}
	recs, err := s.TailAudit(ctx, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * helperBatches * helperBatchSize; len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
}
