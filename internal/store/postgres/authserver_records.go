// authserver_records.go gives the shared OAuth rules (store.OAuthSQL) PostgreSQL's
// transactions, at read committed: each rule is one conditional UPDATE,
// which a concurrent one waits for and then re-checks.

package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpgate/mcpgate/internal/store"
)

// oauthTx runs fn in one transaction, with ? placeholders numbered.
func (s *Store) oauthTx(ctx context.Context, fn func(store.SQLTx) error) error {
	var kept error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err, commit := store.Committed(fn(pgTx{tx}))
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

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

type pgTx struct{ tx pgx.Tx }

func (t pgTx) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, store.NumberPlaceholders(q), store.StorableArgs(args)...)
	return tag.RowsAffected(), err
}

func (t pgTx) QueryRow(ctx context.Context, q string, args ...any) store.Row {
	return pgRow{t.tx.QueryRow(ctx, store.NumberPlaceholders(q), store.StorableArgs(args)...)}
}

func (t pgTx) Query(ctx context.Context, q string, args ...any) (store.Rows, func(), error) {
	rows, err := t.tx.Query(ctx, store.NumberPlaceholders(q), store.StorableArgs(args)...)
	if err != nil {
		return nil, nil, err
	}
	return rows, rows.Close, nil
}

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	if err := r.r.Scan(dest...); errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	} else {
		return err
	}
}
