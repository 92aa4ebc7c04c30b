// audit_conn.go writes the audit log on one connection held for the
// store's life, each statement prepared on it once. Through database/sql
// every statement made a []driver.NamedValue of its arguments: 640 bytes
// per record, the largest allocation of a relayed call. Here one is kept.

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"

	"github.com/mcpgate/mcpgate/internal/store"
)

// auditConn is the audit log's connection and what is prepared on it. The
// store's writeMu guards it; one append's inputs are fields, read by run,
// because sql.Conn.Raw takes a function and a closure per call would
// allocate.
type auditConn struct {
	conn *sql.Conn
	// insert holds the INSERTs by row count, prepared on first use: [0]
	// alone, [1] inside a transaction (insertInTx).
	insert [2][auditRowsPerInsert]driver.Stmt
	mark   driver.Stmt
	values []any
	args   []driver.NamedValue
	run    func(any) error // a.write, made once

	ctx     context.Context
	records []store.AuditRecord
	journal string // whose mark to set; "" for none
	seq     int64
}

// driverConn is what the audit connection needs of the driver's.
type driverConn interface {
	driver.ConnPrepareContext
	driver.ExecerContext
}

// setMark sets a journal's mark.
const setMark = `INSERT INTO audit_journals (id, mark) VALUES (?, ?)
	ON CONFLICT (id) DO UPDATE SET mark = excluded.mark`

// appendAudit writes records and, when journal is not "", sets its mark
// to seq, on the audit connection. A failed write leaves the connection
// rolled back and the store without one; the next append takes a new one.
func (s *Store) appendAudit(ctx context.Context, records []store.AuditRecord, journal string, seq uint64) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	a := s.audit
	if a == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return err
		}
		a = &auditConn{conn: conn}
		a.run = a.write
		s.audit = a
	}
	a.ctx, a.records, a.journal, a.seq = ctx, records, journal, int64(seq)
	err := a.conn.Raw(a.run)
	a.ctx, a.records = nil, nil
	if err != nil {
		s.audit = nil
		_ = a.conn.Close()
	}
	return err
}

// write is one append on the driver's connection dc: one INSERT alone, or
// the INSERTs and the mark in one transaction. On an error it rolls back
// and closes what it prepared.
func (a *auditConn) write(dc any) error {
	c, ok := dc.(driverConn)
	if !ok {
		return errors.New("the driver's connection cannot prepare and execute statements")
	}
	tx := len(a.records) > auditRowsPerInsert || a.journal != ""
	began, err := a.writeIn(c, tx)
	if err == nil {
		return nil
	}
	a.closeStatements()
	if began {
		if _, rerr := c.ExecContext(context.WithoutCancel(a.ctx), "ROLLBACK", nil); rerr != nil {
			// Its state is not known: database/sql closes a bad connection.
			return errors.Join(err, driver.ErrBadConn)
		}
	}
	return err
}

// writeIn is write's work; began reports whether a transaction is open.
func (a *auditConn) writeIn(c driverConn, tx bool) (began bool, err error) {
	if tx {
		if _, err := c.ExecContext(a.ctx, "BEGIN IMMEDIATE", nil); err != nil {
			return false, err
		}
	}
	inserts := &a.insert[0]
	if tx {
		inserts = &a.insert[1]
	}
	for rest := a.records; len(rest) > 0; {
		n := min(len(rest), auditRowsPerInsert)
		if inserts[n-1] == nil {
			q := store.AuditInsert(n, anonymous)
			if tx {
				q = insertInTx(q)
			}
			st, err := c.PrepareContext(a.ctx, q)
			if err != nil {
				return tx, err
			}
			inserts[n-1] = st
		}
		a.values = store.AppendAuditRows(a.values[:0], rest[:n])
		if err := a.exec(inserts[n-1], a.values...); err != nil {
			return tx, err
		}
		rest = rest[n:]
	}
	clear(a.values)
	if a.journal != "" {
		if a.mark == nil {
			st, err := c.PrepareContext(a.ctx, setMark)
			if err != nil {
				return tx, err
			}
			a.mark = st
		}
		if err := a.exec(a.mark, a.journal, a.seq); err != nil {
			return tx, err
		}
	}
	if tx {
		_, err := c.ExecContext(a.ctx, "COMMIT", nil)
		return err != nil, err
	}
	return false, nil
}

// insertInTx makes an INSERT of several rows one for inside a transaction:
// INSERT OR FAIL. A failure rolls the whole transaction back (write), so
// ABORT's undoing of the failed statement alone is not needed. SQLite then
// keeps no statement journal: 12% of a 256-record append.
func insertInTx(insert string) string { return "INSERT OR FAIL" + strings.TrimPrefix(insert, "INSERT") }

// exec runs st with values, through the kept arguments' slice.
func (a *auditConn) exec(st driver.Stmt, values ...any) error {
	a.args = a.args[:0]
	for i, v := range values {
		a.args = append(a.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	_, err := st.(driver.StmtExecContext).ExecContext(a.ctx, a.args)
	clear(a.args)
	return err
}

// closeStatements closes what was prepared on the driver's connection;
// the caller holds it (inside Raw).
func (a *auditConn) closeStatements() {
	for k := range a.insert {
		for i, st := range a.insert[k] {
			if st != nil {
				_ = st.Close()
				a.insert[k][i] = nil
			}
		}
	}
	if a.mark != nil {
		_ = a.mark.Close()
		a.mark = nil
	}
}

// close closes the statements and gives the connection back to the pool.
func (a *auditConn) close() {
	_ = a.conn.Raw(func(any) error {
		a.closeStatements()
		return nil
	})
	_ = a.conn.Close()
}
