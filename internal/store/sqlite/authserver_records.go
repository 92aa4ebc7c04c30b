// authserver_records.go gives the shared OAuth rules (store.OAuthSQL) SQLite's
// transactions: writers queue on writeMu as every other write here does.

package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/mcpgate/mcpgate/internal/store"
)

// oauthTx runs fn in one write transaction.
func (s *Store) oauthTx(ctx context.Context, fn func(store.SQLTx) error) error {
	var kept error
	err := s.write(ctx, func(tx *sql.Tx) error {
		err, commit := store.Committed(fn(sqlTx{tx}))
		if commit {
			kept = err
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return kept
}

// oauthRead runs fn's reads outside any transaction, each statement
// prepared once: a read on a hot path (a per_user call's credential) does
// not wait for the write lock, nor parse its SQL again.
func (s *Store) oauthRead(_ context.Context, fn func(store.SQLTx) error) error {
	return fn(sqlTx{preparedReads{s}})
}

// preparedReads is the database, its queries prepared once each (their
// text is the code's, so the set is small).
type preparedReads struct{ s *Store }

func (p preparedReads) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	p.s.readMu.Lock()
	defer p.s.readMu.Unlock()
	if st := p.s.readStmts[q]; st != nil {
		return st, nil
	}
	st, err := p.s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if p.s.readStmts == nil {
		p.s.readStmts = map[string]*sql.Stmt{}
	}
	p.s.readStmts[q] = st
	return st, nil
}

func (p preparedReads) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return p.s.db.ExecContext(ctx, q, args...) // reads only: not cached
}

func (p preparedReads) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return p.s.db.QueryRowContext(ctx, q, args...) // its error, as the query's
	}
	return st.QueryRowContext(ctx, args...)
}

func (p preparedReads) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// querier is a transaction, or the database for reads alone.
type querier interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

type sqlTx struct{ tx querier }

func (t sqlTx) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, q, store.StorableArgs(args)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t sqlTx) QueryRow(ctx context.Context, q string, args ...any) store.Row {
	return sqlRow{t.tx.QueryRowContext(ctx, q, store.StorableArgs(args)...)}
}

func (t sqlTx) Query(ctx context.Context, q string, args ...any) (store.Rows, func(), error) {
	rows, err := t.tx.QueryContext(ctx, q, store.StorableArgs(args)...)
	if err != nil {
		return nil, nil, err
	}
	return rows, func() { rows.Close() }, nil
}

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	if err := r.r.Scan(dest...); errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	} else {
		return err
	}
}
