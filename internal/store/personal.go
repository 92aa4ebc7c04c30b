// personal.go keeps each person's own credentials for per_user backends:
// one sealed value per principal and backend. As with the backends'
// records (credentials.go), the store never sees a value in the clear:
// package personal seals it (AES-GCM, the principal and backend bound in)
// before it gets here.

package store

import (
	"context"
	"time"
)

// PersonalCredential is one principal's stored credential for one
// backend, without its value.
type PersonalCredential struct {
	Principal, Backend string
	UpdatedAt          time.Time
}

// PersonalCredentialStore keeps sealed credentials by principal and
// backend.
type PersonalCredentialStore interface {
	// PersonalCredential is the sealed value principal stored for
	// backend; ErrNotFound.
	PersonalCredential(ctx context.Context, principal, backend string) ([]byte, error)
	// PutPersonalCredential stores it, replacing the one there was.
	PutPersonalCredential(ctx context.Context, principal, backend string, sealed []byte, at time.Time) error
	// DeletePersonalCredential forgets it; ErrNotFound when there was none.
	DeletePersonalCredential(ctx context.Context, principal, backend string) error
	// UpdatePersonalCredential runs fn on the sealed value (nil: none)
	// with it locked, and stores what fn returns (nil: nothing changes),
	// as UpdateBackendCredential does: replicas take turns.
	UpdatePersonalCredential(ctx context.Context, principal, backend string, at time.Time, fn func(sealed []byte) ([]byte, error)) error
	// PersonalCredentials lists principal's ("" for everyone's), by
	// principal then backend, without values.
	PersonalCredentials(ctx context.Context, principal string) ([]PersonalCredential, error)
}

func (s OAuthSQL) PersonalCredential(ctx context.Context, principal, backend string) ([]byte, error) {
	var sealed []byte
	err := s.read(ctx, func(tx SQLTx) error {
		return tx.QueryRow(ctx, `SELECT sealed FROM personal_credentials WHERE principal = ? AND backend = ?`,
			principal, backend).Scan(&sealed)
	})
	return sealed, s.errorf("personal credential", err)
}

func (s OAuthSQL) PutPersonalCredential(ctx context.Context, principal, backend string, sealed []byte, at time.Time) error {
	return s.errorf("save personal credential", s.Tx(ctx, func(tx SQLTx) error {
		_, err := tx.Exec(ctx, `INSERT INTO personal_credentials (principal, backend, sealed, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (principal, backend) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
			principal, backend, sealed, at.UnixNano())
		return err
	}))
}

func (s OAuthSQL) DeletePersonalCredential(ctx context.Context, principal, backend string) error {
	return s.errorf("delete personal credential", s.Tx(ctx, func(tx SQLTx) error {
		n, err := tx.Exec(ctx, `DELETE FROM personal_credentials WHERE principal = ? AND backend = ?`, principal, backend)
		if err == nil && n == 0 {
			err = ErrNotFound
		}
		return err
	}))
}

func (s OAuthSQL) UpdatePersonalCredential(ctx context.Context, principal, backend string, at time.Time, fn func(sealed []byte) ([]byte, error)) error {
	row := sealedRow{"personal_credentials", []string{"principal", "backend"}, []any{principal, backend}}
	return s.errorf("update personal credential", s.updateSealed(ctx, row, at, fn))
}

func (s OAuthSQL) PersonalCredentials(ctx context.Context, principal string) ([]PersonalCredential, error) {
	var out []PersonalCredential
	err := s.read(ctx, func(tx SQLTx) error {
		rows, done, err := tx.Query(ctx, `SELECT principal, backend, updated_at FROM personal_credentials
			WHERE ? = '' OR principal = ? ORDER BY principal, backend`, principal, principal)
		if err != nil {
			return err
		}
		defer done()
		for rows.Next() {
			var c PersonalCredential
			var at int64
			if err := rows.Scan(&c.Principal, &c.Backend, &at); err != nil {
				return err
			}
			c.UpdatedAt = time.Unix(0, at).UTC()
			out = append(out, c)
		}
		return rows.Err()
	})
	return out, s.errorf("personal credentials", err)
}
