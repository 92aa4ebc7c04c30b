// tokens.go keeps service tokens: their hashes, never the tokens.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcpgate/mcpgate/internal/store"
)

// CreateToken saves t; store.ErrDuplicate if its id or hash is taken.
func (s *Store) CreateToken(ctx context.Context, t store.Token) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO tokens (id, name, role, hash, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.Name, t.Role, t.Hash, store.EncodeTime(t.CreatedAt), store.EncodeTime(t.ExpiresAt), store.EncodeTime(t.RevokedAt))
		return err
	})
	if isUniqueViolation(err) {
		// The driver's message names the column, not the value: no hash
		// reaches a log through it.
		return fmt.Errorf("sqlite: create token %s: %w (%v)", t.ID, store.ErrDuplicate, err)
	}
	if err != nil {
		return fmt.Errorf("sqlite: create token %s: %w", t.ID, err)
	}
	return nil
}

// Tokens returns every token, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	rows, err := s.db.QueryContext(ctx,
		"SELECT "+store.TokenColumns+" FROM tokens ORDER BY created_at, rowid")
	if err != nil {
		return nil, fmt.Errorf("sqlite: tokens: %w", err)
	}
	defer rows.Close()
	out, err := store.ScanTokens(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tokens: %w", err)
	}
	return out, nil
}

// RevokeToken marks the token revoked at at. A token revoked already keeps
// its first revocation time: that is when it stopped working.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		var revoked int64
		err := tx.QueryRowContext(ctx, `SELECT revoked_at FROM tokens WHERE id = ?`, id).Scan(&revoked)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil || revoked != 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE id = ?`, store.EncodeTime(at), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: revoke token %s: %w", id, err)
	}
	return nil
}

func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}
