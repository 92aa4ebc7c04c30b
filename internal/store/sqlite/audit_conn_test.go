// audit_conn_test.go pins the audit connection's answer to a write that
// fails halfway: nothing of it is kept, and the next append is written.

package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
)

func TestAFailedAuditAppendIsRolledBackAndTheNextOneWritten(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	s := openStore(t, path)
	rec := func(name string) store.AuditRecord {
		return store.AuditRecord{Time: time.Unix(1_800_000_000, 0), Subject: "alice", Kind: "tool", Name: name, Outcome: "ok"}
	}
	if err := s.AppendAuditThrough(ctx, []store.AuditRecord{rec("a")}, "journal", 1); err != nil {
		t.Fatal(err)
	}
	// Another connection takes the journals' table away: the next
	// append's INSERT succeeds, then its mark fails, inside one
	// transaction.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `DROP TABLE audit_journals`); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAuditThrough(ctx, []store.AuditRecord{rec("b"), rec("c")}, "journal", 3); err == nil {
		t.Fatal("an append whose mark has no table succeeded")
	}
	if err := s.AppendAudit(ctx, []store.AuditRecord{rec("d")}); err != nil {
		t.Fatalf("the append after a failed one: %v", err)
	}
	got, err := s.TailAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
	}
	if len(names) != 2 || names[0] != "a" || names[1] != "d" {
		t.Errorf("records %q, want [a d]: the failed append's records kept, or the next one's lost", names)
	}
}
