// audit_conn_test.go pins the audit connection's answer to a write that
// fails halfway: nothing of it is kept, and the next append is written.

package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
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

// An append is all or none, whether it is one INSERT on its own or
// several in a transaction (where they are INSERT OR FAIL): a record that
// breaks a constraint halfway leaves none of its append's records, nor
// its journal's mark. The constraint is the test's own, a unique index on
// the name.
func TestAnAuditAppendThatFailsHalfwayKeepsNothing(t *testing.T) {
	ctx := context.Background()
	batch := func(n, dup int) []store.AuditRecord {
		rs := make([]store.AuditRecord, n)
		for i := range rs {
			rs[i] = store.AuditRecord{Time: time.Unix(1_800_000_000, 0), Subject: "alice", Kind: "tool", Name: fmt.Sprint("t", i), Outcome: "ok"}
		}
		rs[dup].Name = rs[2].Name
		return rs
	}
	for _, tc := range []struct {
		name    string
		records []store.AuditRecord
		journal bool
	}{
		{"one INSERT on its own", batch(10, 6), false},
		{"INSERTs in a transaction, the third fails", batch(200, 150), false},
		{"one INSERT and the journal's mark in a transaction", batch(10, 6), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.db")
			s := openStore(t, path)
			if err := s.AppendAuditThrough(ctx, []store.AuditRecord{{Time: time.Unix(1_799_999_999, 0), Name: "before"}}, "journal", 1); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(ctx, `CREATE UNIQUE INDEX audit_name_once ON audit (name)`); err != nil {
				t.Fatal(err)
			}
			if tc.journal {
				err = s.AppendAuditThrough(ctx, tc.records, "journal", 2)
			} else {
				err = s.AppendAudit(ctx, tc.records)
			}
			if err == nil {
				t.Fatal("an append with a duplicate name succeeded")
			}
			got, err := s.TailAudit(ctx, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Name != "before" {
				t.Errorf("%d records after the failed append, want only the one before it", len(got))
			}
			if mark, err := s.AuditJournalMark(ctx, "journal"); err != nil || mark != 1 {
				t.Errorf("journal mark %d, %v; want 1, as before the failed append", mark, err)
			}
		})
	}
}
