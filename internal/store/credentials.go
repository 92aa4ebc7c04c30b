// credentials.go keeps what the gateway holds as an OAuth client of its
// backends: one sealed record per backend (its registrations, tokens and
// the authorization an admin has yet to finish). The store never sees
// them in the clear: package oauthclient seals each record (AES-GCM) before it
// gets here, and the shared SQL below only moves bytes.

package store

import (
	"context"
	"slices"
	"strings"
	"time"
)

// CredentialStore keeps sealed backend credentials by backend name.
type CredentialStore interface {
	// BackendCredential is the sealed record of a backend; ErrNotFound.
	BackendCredential(ctx context.Context, name string) ([]byte, error)
	// PutBackendCredential saves a backend's sealed record, replacing the
	// one it had.
	PutBackendCredential(ctx context.Context, name string, sealed []byte, at time.Time) error
	// DeleteBackendCredential forgets a backend's record (none: no error).
	DeleteBackendCredential(ctx context.Context, name string) error
	// UpdateBackendCredential runs fn on a backend's sealed record (nil:
	// none) with the record locked, and saves what fn returns (nil:
	// nothing changes). Two replicas updating one record take turns: the
	// second's fn sees the first's result.
	UpdateBackendCredential(ctx context.Context, name string, at time.Time, fn func(sealed []byte) ([]byte, error)) error
}

func (s OAuthSQL) BackendCredential(ctx context.Context, name string) ([]byte, error) {
	var sealed []byte
	err := s.Tx(ctx, func(tx SQLTx) error {
		return tx.QueryRow(ctx, `SELECT sealed FROM backend_credentials WHERE name = ?`, name).Scan(&sealed)
	})
	return sealed, s.errorf("backend credential", err)
}

func (s OAuthSQL) PutBackendCredential(ctx context.Context, name string, sealed []byte, at time.Time) error {
	return s.errorf("save backend credential", s.Tx(ctx, func(tx SQLTx) error {
		_, err := tx.Exec(ctx, `INSERT INTO backend_credentials (name, sealed, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`, name, sealed, at.UnixNano())
		return err
	}))
}

func (s OAuthSQL) DeleteBackendCredential(ctx context.Context, name string) error {
	return s.errorf("delete backend credential", s.Tx(ctx, func(tx SQLTx) error {
		_, err := tx.Exec(ctx, `DELETE FROM backend_credentials WHERE name = ?`, name)
		return err
	}))
}

func (s OAuthSQL) UpdateBackendCredential(ctx context.Context, name string, at time.Time, fn func(sealed []byte) ([]byte, error)) error {
	return s.errorf("update backend credential", s.updateSealed(ctx, sealedRow{"backend_credentials", []string{"name"}, []any{name}}, at, fn))
}

// sealedRow is one row of a table of sealed records: the table, its key
// columns and their values.
type sealedRow struct {
	table string
	cols  []string
	vals  []any
}

func (r sealedRow) where() string {
	w := ""
	for i, c := range r.cols {
		if i > 0 {
			w += " AND "
		}
		w += c + " = ?"
	}
	return " WHERE " + w
}

// updateSealed runs fn on row's sealed record (nil: none) with the row
// locked, and saves what fn returns (nil: nothing changes). Two replicas
// updating one record take turns: the second's fn sees the first's result.
func (s OAuthSQL) updateSealed(ctx context.Context, row sealedRow, at time.Time, fn func(sealed []byte) ([]byte, error)) error {
	return s.Tx(ctx, func(tx SQLTx) error {
		// A row to lock, even for a record not made yet: two first
		// updates must take turns too. An empty one stands for none.
		marks := strings.Repeat("?, ", len(row.cols))
		created, err := tx.Exec(ctx, `INSERT INTO `+row.table+` (`+strings.Join(row.cols, ", ")+`, sealed, updated_at) VALUES (`+marks+`?, ?)
			ON CONFLICT (`+strings.Join(row.cols, ", ")+`) DO NOTHING`, append(slices.Clone(row.vals), []byte{}, at.UnixNano())...)
		if err != nil {
			return err
		}
		var old []byte
		if err := tx.QueryRow(ctx, `SELECT sealed FROM `+row.table+row.where()+s.LockRow, row.vals...).Scan(&old); err != nil {
			return err
		}
		if len(old) == 0 {
			old = nil
		}
		next, err := fn(old)
		switch {
		case err != nil:
			return err
		case next == nil && created > 0:
			_, err = tx.Exec(ctx, `DELETE FROM `+row.table+row.where(), row.vals...)
			return err
		case next == nil:
			return nil
		}
		_, err = tx.Exec(ctx, `UPDATE `+row.table+` SET sealed = ?, updated_at = ?`+row.where(), append([]any{next, at.UnixNano()}, row.vals...)...)
		return err
	})
}
