// console.go is what ends a console session on every replica. The
// console's cookie is sealed, not stored, so that any replica opens it;
// logging out only cleared the cookie, and a copy of it went on working
// for hours. A logout records the session it ends, until the cookie would
// have expired by itself.

package store

import (
	"context"
	"errors"
	"time"
)

// ConsoleStore is the console's part of a Store.
type ConsoleStore interface {
	// EndConsoleSession records session id ended until until (when its
	// cookie expires anyway), and forgets those whose until is past at.
	EndConsoleSession(ctx context.Context, id string, until, at time.Time) error
	// ConsoleSessionEnded reports whether session id was ended.
	ConsoleSessionEnded(ctx context.Context, id string) (bool, error)
}

func (s OAuthSQL) EndConsoleSession(ctx context.Context, id string, until, at time.Time) error {
	return s.errorf("end console session", s.Tx(ctx, func(tx SQLTx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM console_ended WHERE until < ?`, EncodeTime(at)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO console_ended (id, until) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`, id, EncodeTime(until))
		return err
	}))
}

func (s OAuthSQL) ConsoleSessionEnded(ctx context.Context, id string) (bool, error) {
	var ended bool
	err := s.Tx(ctx, func(tx SQLTx) error {
		var got string
		switch err := tx.QueryRow(ctx, `SELECT id FROM console_ended WHERE id = ?`, id).Scan(&got); {
		case err == nil:
			ended = true
		case !errors.Is(err, ErrNotFound):
			return err
		}
		return nil
	})
	return ended, s.errorf("console session", err)
}
