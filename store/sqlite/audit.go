// audit.go keeps the audit log: appended in batches, read from its end.

package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mcpgate/mcpgate/store"
)

// AppendAudit writes records in one transaction, through one prepared
// statement: a batch costs one commit (one fsync of the WAL at most), not
// one per record.
func (s *Store) AppendAudit(ctx context.Context, records []store.AuditRecord) error {
	if len(records) == 0 {
		return nil
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit
			(time, subject, token_id, role, kind, name, backend, outcome, code, duration_us)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range records {
			if _, err := stmt.ExecContext(ctx, encodeTime(r.Time), r.Subject, r.TokenID, r.Role, r.Kind,
				r.Name, r.Backend, r.Outcome, r.Code, encodeDuration(r.Duration)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: append %d audit records: %w", len(records), err)
	}
	return nil
}

// TailAudit returns the latest n records by time (ties in the order they
// were written), oldest first.
func (s *Store) TailAudit(ctx context.Context, n int) ([]store.AuditRecord, error) {
	if n <= 0 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT time, subject, token_id, role, kind, name, backend, outcome, code, duration_us
		FROM (SELECT * FROM audit ORDER BY time DESC, id DESC LIMIT ?)
		ORDER BY time, id`, n)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tail audit: %w", err)
	}
	defer rows.Close()
	out := make([]store.AuditRecord, 0, min(n, 1024))
	for rows.Next() {
		var r store.AuditRecord
		var t, us int64
		if err := rows.Scan(&t, &r.Subject, &r.TokenID, &r.Role, &r.Kind, &r.Name, &r.Backend, &r.Outcome, &r.Code, &us); err != nil {
			return nil, fmt.Errorf("sqlite: tail audit: %w", err)
		}
		r.Time, r.Duration = decodeTime(t), decodeDuration(us)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: tail audit: %w", err)
	}
	return out, nil
}
