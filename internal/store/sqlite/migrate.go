// migrate.go is the schema, as an ordered list of migrations and a table
// recording how many of them a database has had. Opening a database runs
// the missing ones in one transaction, so two processes opening a new file
// at once cannot both create it, and a failed upgrade leaves it as it was.
// Migrations are only ever appended: a released one never changes.

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] brings the schema from version i to version i+1.
var migrations = []string{
	// 1: service tokens and the audit log. Times are UTC unix nanoseconds,
	// 0 for the zero time (see times.go).
	`CREATE TABLE tokens (
		id         TEXT PRIMARY KEY,
		name       TEXT NOT NULL,
		role       TEXT NOT NULL,
		hash       BLOB NOT NULL UNIQUE,
		created_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL DEFAULT 0,
		revoked_at INTEGER NOT NULL DEFAULT 0
	);
	CREATE TABLE audit (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		time        INTEGER NOT NULL,
		subject     TEXT NOT NULL,
		token_id    TEXT NOT NULL,
		role        TEXT NOT NULL,
		kind        TEXT NOT NULL,
		name        TEXT NOT NULL,
		backend     TEXT NOT NULL,
		outcome     TEXT NOT NULL,
		code        INTEGER NOT NULL,
		duration_us INTEGER NOT NULL
	);
	CREATE INDEX audit_time ON audit(time);`,
	// 2: the built-in OAuth authorization server (store/authserver_records.go).
	`CREATE TABLE oauth_clients (
		id            TEXT PRIMARY KEY,
		name          TEXT NOT NULL,
		redirect_uris TEXT NOT NULL,
		created_at    INTEGER NOT NULL
	);
	CREATE TABLE oauth_codes (
		hash         BLOB PRIMARY KEY,
		client_id    TEXT NOT NULL,
		redirect_uri TEXT NOT NULL,
		challenge    TEXT NOT NULL,
		resource     TEXT NOT NULL,
		scope        TEXT NOT NULL,
		role         TEXT NOT NULL,
		subject      TEXT NOT NULL,
		token_id     TEXT NOT NULL,
		created_at   INTEGER NOT NULL,
		expires_at   INTEGER NOT NULL,
		used_at      INTEGER NOT NULL,
		grant_id     TEXT NOT NULL
	);
	CREATE TABLE oauth_grants (
		id            TEXT PRIMARY KEY,
		client_id     TEXT NOT NULL,
		client_name   TEXT NOT NULL,
		subject       TEXT NOT NULL,
		token_id      TEXT NOT NULL,
		role          TEXT NOT NULL,
		scope         TEXT NOT NULL,
		resource      TEXT NOT NULL,
		refresh_hash  BLOB NOT NULL UNIQUE,
		previous_hash BLOB,
		created_at    INTEGER NOT NULL,
		refreshed_at  INTEGER NOT NULL,
		expires_at    INTEGER NOT NULL,
		revoked_at    INTEGER NOT NULL
	);
	CREATE INDEX oauth_grants_previous ON oauth_grants(previous_hash);`,
	// 3: the gateway's sealed credentials towards its backends
	// (store/credentials.go).
	`CREATE TABLE backend_credentials (
		name       TEXT PRIMARY KEY,
		sealed     BLOB NOT NULL,
		updated_at INTEGER NOT NULL
	);`,
	// 4: every refresh token a grant spent, so that a replay of any of
	// them revokes the grant (RFC 9700 §4.14.2), not only of the last.
	`CREATE TABLE oauth_refresh_spent (
		hash     BLOB PRIMARY KEY,
		grant_id TEXT NOT NULL,
		spent_at INTEGER NOT NULL
	);
	CREATE INDEX oauth_refresh_spent_grant ON oauth_refresh_spent(grant_id);`,
	// 5: the console sessions logged out of (store/console.go).
	`CREATE TABLE console_ended (
		id    TEXT PRIMARY KEY,
		until INTEGER NOT NULL
	);`,
	// 6: how far through the audit journal the audit table is
	// (audit/journal.go): one row.
	`CREATE TABLE audit_journal (
		id   INTEGER PRIMARY KEY CHECK (id = 1),
		mark INTEGER NOT NULL
	);
	INSERT INTO audit_journal (id, mark) VALUES (1, 0);`,
	// 7: one mark per journal: each process on the database keeps its
	// own journal (audit/journal.go).
	`DROP TABLE audit_journal;
	CREATE TABLE audit_journals (
		id   TEXT PRIMARY KEY,
		mark INTEGER NOT NULL
	);`,
	// 8: the backend's own name of a renamed tool or prompt.
	`ALTER TABLE audit ADD COLUMN origin TEXT NOT NULL DEFAULT '';`,
	// 9: the catalogue's pins (store/pins.go).
	`CREATE TABLE catalogue_pins (
		backend            TEXT NOT NULL,
		kind               TEXT NOT NULL,
		name               TEXT NOT NULL,
		fingerprint        TEXT NOT NULL,
		definition         TEXT NOT NULL,
		approved_by        TEXT NOT NULL,
		approved_at        INTEGER NOT NULL,
		pending            TEXT NOT NULL DEFAULT '',
		pending_definition TEXT NOT NULL DEFAULT '',
		pending_since      INTEGER NOT NULL DEFAULT 0,
		rejected           TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (backend, kind, name)
	);`,
	// 10: each person's own credentials (store/personal.go), sealed.
	`CREATE TABLE personal_credentials (
		principal  TEXT NOT NULL,
		backend    TEXT NOT NULL,
		sealed     BLOB NOT NULL,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (principal, backend)
	);`,
	// 11: whom a call was made as at the backend (a per_user backend's).
	`ALTER TABLE audit ADD COLUMN upstream TEXT NOT NULL DEFAULT '';`,
	// 12: the policy rule that denied a call.
	`ALTER TABLE audit ADD COLUMN rule TEXT NOT NULL DEFAULT '';`,
	// 13: what the redactor took out of an answer.
	`ALTER TABLE audit ADD COLUMN redacted TEXT NOT NULL DEFAULT '';`,
	// 14: what interceptors came to, other than allowing or denying.
	`ALTER TABLE audit ADD COLUMN hooks TEXT NOT NULL DEFAULT '';`,
}

// migrate brings the schema up to date.
func (s *Store) migrate(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("schema version: %w", err)
		}
		var version int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&version); err != nil {
			return fmt.Errorf("schema version: %w", err)
		}
		if version > len(migrations) {
			// A newer mcpgate has been here; writing with this one could
			// break what that one relies on.
			return fmt.Errorf("schema version %d is newer than this mcpgate knows (%d)", version, len(migrations))
		}
		if version == len(migrations) {
			return nil
		}
		for i := version; i < len(migrations); i++ {
			if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
			return fmt.Errorf("schema version: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, len(migrations)); err != nil {
			return fmt.Errorf("schema version: %w", err)
		}
		return nil
	})
}
