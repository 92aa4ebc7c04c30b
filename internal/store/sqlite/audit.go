// audit.go keeps the audit log: appended in batches, read from its end.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcpgate/mcpgate/internal/store"
)

// AppendAudit writes records: up to auditRowsPerInsert of them as one
// INSERT, which is its own transaction (no BEGIN and COMMIT to parse and
// run around it: a third of a lone record's cost); more in one
// transaction, auditRowsPerInsert a statement. A batch costs one commit
// (one fsync of the WAL at most), not one per record. They are written on
// the audit connection (audit_conn.go).
func (s *Store) AppendAudit(ctx context.Context, records []store.AuditRecord) error {
	if len(records) == 0 {
		return nil
	}
	if err := s.appendAudit(ctx, records, "", 0); err != nil {
		return fmt.Errorf("sqlite: append %d audit records: %w", len(records), refusedOr(err))
	}
	return nil
}

// refusedOr is err, with store.ErrRefused when SQLite refused the data
// itself: a violated constraint (a trigger's RAISE among them), a value
// too big or of the wrong type.
func refusedOr(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH:
			return fmt.Errorf("%w: %w", store.ErrRefused, err)
		}
	}
	return err
}

// AuditJournal is where the audit log's journals are kept: beside the
// database, as SQLite keeps its own -wal file.
func (s *Store) AuditJournal() string { return s.path + "-audit" }

// AppendAuditThrough writes records and sets journal id's mark to seq, in
// one transaction.
func (s *Store) AppendAuditThrough(ctx context.Context, records []store.AuditRecord, id string, seq uint64) error {
	if err := s.appendAudit(ctx, records, id, seq); err != nil {
		return fmt.Errorf("sqlite: append %d audit records through %s:%d: %w", len(records), id, seq, refusedOr(err))
	}
	return nil
}

// AuditJournalMark is the mark AppendAuditThrough last set for journal
// id, 0 for none.
func (s *Store) AuditJournalMark(ctx context.Context, id string) (uint64, error) {
	var mark int64
	err := s.db.QueryRowContext(ctx, `SELECT mark FROM audit_journals WHERE id = ?`, id).Scan(&mark)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: audit journal mark: %w", err)
	}
	return uint64(mark), nil
}

// ForgetAuditJournal deletes journal id's mark.
func (s *Store) ForgetAuditJournal(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM audit_journals WHERE id = ?`, id)
		return err
	})
}

// anonymous is the placeholder of an INSERT's values: the driver binds
// numbered ones by name, at a cost per value.
func anonymous(int) string { return "?" }

// One INSERT carries up to auditRowsPerInsert records: one statement per
// record cost a bind, a context watch and a step per record, 7.5% of the
// relay's CPU in the benchmark's profile. 64 rows of 15 columns (960
// parameters) stay below the oldest SQLite limit on parameters (999).
const auditRowsPerInsert = 64

// TailAudit returns the latest n records by time (ties in the order they
// were written), oldest first.
func (s *Store) TailAudit(ctx context.Context, n int) ([]store.AuditRecord, error) {
	if n <= 0 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+store.AuditColumns+`
		FROM (SELECT * FROM audit ORDER BY time DESC, id DESC LIMIT ?)
		ORDER BY time, id`, n)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tail audit: %w", err)
	}
	defer rows.Close()
	out, err := store.ScanAudit(rows, n)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tail audit: %w", err)
	}
	return out, nil
}

// sqliteDialect is SQLite's SQL for store.AuditWhere.
var sqliteDialect = store.Dialect{
	Arg:      func(i int) string { return "?" + strconv.Itoa(i) }, // numbered: a placeholder may be used twice
	Contains: func(col, arg string) string { return "instr(" + col + ", " + arg + ") > 0" },
}

// QueryAudit returns one page of the records q selects, newest first.
func (s *Store) QueryAudit(ctx context.Context, q store.AuditQuery) (store.AuditPage, error) {
	where, args, err := store.AuditWhere(q, sqliteDialect)
	if err != nil {
		return store.AuditPage{}, err
	}
	order, args := store.AuditPageOrder(q, sqliteDialect, args)
	rows, err := s.db.QueryContext(ctx, "SELECT id, "+store.AuditColumns+" FROM audit"+where+order, args...)
	if err != nil {
		return store.AuditPage{}, fmt.Errorf("sqlite: query audit: %w", err)
	}
	defer rows.Close()
	page, err := store.ScanAuditPage(rows, q)
	if err != nil {
		return store.AuditPage{}, fmt.Errorf("sqlite: query audit: %w", err)
	}
	return page, nil
}
