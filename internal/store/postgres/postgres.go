// Package postgres is the store.Store of a PostgreSQL database, shared by
// several gateway replicas and the `mcpgate token` command run beside
// them: tokens created through one replica are there for all, and every
// replica's audit records land in one log.
//
// The schema is the SQLite store's, in PostgreSQL's types: times are UTC
// unix nanoseconds in a bigint (timestamptz keeps microseconds only, and a
// token's times come back to the nanosecond), durations microseconds.
// Opening a database runs the missing migrations in one transaction under
// an advisory lock, so that replicas starting at once do not race; a
// database a newer mcpgate has migrated is refused. A batch of audit
// records is written whole or not at all, in order.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpgate/mcpgate/internal/store"
)

// DefaultMaxConns bounds a store's connections when Options.MaxConns is
// 0: a replica's writers are the audit batcher and token commands, its
// readers the token refresh; a handful is plenty, and many replicas
// share the server's max_connections.
const DefaultMaxConns = 8

// Options configure Open.
type Options struct {
	// MaxConns bounds the pool (0: DefaultMaxConns).
	MaxConns int32
	// Password, when set, is used in place of the URL's (which then need
	// not carry one): it comes from the environment or a file, never the
	// configuration file.
	Password string
	// JournalDir, when set, is a folder on this replica's own disk where
	// the audit log's group commit keeps its journal (AuditJournal).
	JournalDir string
}

// Store is a store.Store on a PostgreSQL database. It is safe for
// concurrent use.
type Store struct {
	pool       *pgxpool.Pool
	journalDir string // Options.JournalDir
	// OAuthSQL is the authorization server's part, over oauthTx.
	store.OAuthSQL
	// PinSQL is the catalogue's pins, over oauthTx.
	store.PinSQL
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (postgres://…) and brings its
// schema up to date.
func Open(ctx context.Context, url string, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: the store URL does not parse (%v)", redact(err))
	}
	cfg.MaxConns = DefaultMaxConns
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	if o.Password != "" {
		cfg.ConnConfig.Password = o.Password
	}
	if o.JournalDir != "" {
		if err := os.MkdirAll(o.JournalDir, 0o700); err != nil {
			return nil, fmt.Errorf("postgres: the audit journal's folder: %w", err)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool, journalDir: o.JournalDir}
	s.OAuthSQL = store.OAuthSQL{Tx: s.oauthTx, Name: "postgres", IsDuplicate: isUniqueViolation, LockRow: " FOR UPDATE",
		// SHARE ROW EXCLUSIVE conflicts with itself and with inserts, not
		// with reads: registrations take turns, look-ups do not wait.
		LockClients: "LOCK TABLE oauth_clients IN SHARE ROW EXCLUSIVE MODE"}
	s.PinSQL = store.PinSQL{Tx: s.oauthTx}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect to %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return s, nil
}

// redact keeps a URL parse error from quoting the URL, which may hold a
// password: only the kind of failure is said.
func redact(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return "not a PostgreSQL connection string"
	}
	return "invalid connection string"
}

// Close closes the pool.
// Ping asks the server for an answer.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// migrations[i] brings the schema from version i to version i+1. They are
// only ever appended: a released one never changes.
var migrations = []string{
	`CREATE TABLE tokens (
		id         text PRIMARY KEY,
		name       text NOT NULL,
		role       text NOT NULL,
		hash       bytea NOT NULL UNIQUE,
		created_at bigint NOT NULL,
		expires_at bigint NOT NULL DEFAULT 0,
		revoked_at bigint NOT NULL DEFAULT 0
	);
	CREATE TABLE audit (
		id          bigserial PRIMARY KEY,
		time        bigint NOT NULL,
		subject     text NOT NULL,
		token_id    text NOT NULL,
		role        text NOT NULL,
		kind        text NOT NULL,
		name        text NOT NULL,
		backend     text NOT NULL,
		outcome     text NOT NULL,
		code        bigint NOT NULL,
		duration_us bigint NOT NULL
	);
	CREATE INDEX audit_time ON audit (time);`,
	// 2: the built-in OAuth authorization server (store/authserver_records.go).
	`CREATE TABLE oauth_clients (
		id            text PRIMARY KEY,
		name          text NOT NULL,
		redirect_uris text NOT NULL,
		created_at    bigint NOT NULL
	);
	CREATE TABLE oauth_codes (
		hash         bytea PRIMARY KEY,
		client_id    text NOT NULL,
		redirect_uri text NOT NULL,
		challenge    text NOT NULL,
		resource     text NOT NULL,
		scope        text NOT NULL,
		role         text NOT NULL,
		subject      text NOT NULL,
		token_id     text NOT NULL,
		created_at   bigint NOT NULL,
		expires_at   bigint NOT NULL,
		used_at      bigint NOT NULL,
		grant_id     text NOT NULL
	);
	CREATE TABLE oauth_grants (
		id            text PRIMARY KEY,
		client_id     text NOT NULL,
		client_name   text NOT NULL,
		subject       text NOT NULL,
		token_id      text NOT NULL,
		role          text NOT NULL,
		scope         text NOT NULL,
		resource      text NOT NULL,
		refresh_hash  bytea NOT NULL UNIQUE,
		previous_hash bytea,
		created_at    bigint NOT NULL,
		refreshed_at  bigint NOT NULL,
		expires_at    bigint NOT NULL,
		revoked_at    bigint NOT NULL
	);
	CREATE INDEX oauth_grants_previous ON oauth_grants (previous_hash);`,
	// 3: the gateway's sealed credentials towards its backends
	// (store/credentials.go).
	`CREATE TABLE backend_credentials (
		name       text PRIMARY KEY,
		sealed     bytea NOT NULL,
		updated_at bigint NOT NULL
	);`,
	// 4: every refresh token a grant spent, so that a replay of any of
	// them revokes the grant (RFC 9700 §4.14.2), not only of the last.
	`CREATE TABLE oauth_refresh_spent (
		hash     bytea PRIMARY KEY,
		grant_id text NOT NULL,
		spent_at bigint NOT NULL
	);
	CREATE INDEX oauth_refresh_spent_grant ON oauth_refresh_spent (grant_id);`,
	// 5: the console sessions logged out of (store/console.go).
	`CREATE TABLE console_ended (
		id    text PRIMARY KEY,
		until bigint NOT NULL
	);`,
	// 6: the backend's own name of a renamed tool or prompt.
	`ALTER TABLE audit ADD COLUMN origin text NOT NULL DEFAULT '';`,
	// 7: the catalogue's pins (store/pins.go).
	`CREATE TABLE catalogue_pins (
		backend            text NOT NULL,
		kind               text NOT NULL,
		name               text NOT NULL,
		fingerprint        text NOT NULL,
		definition         text NOT NULL,
		approved_by        text NOT NULL,
		approved_at        bigint NOT NULL,
		pending            text NOT NULL DEFAULT '',
		pending_definition text NOT NULL DEFAULT '',
		pending_since      bigint NOT NULL DEFAULT 0,
		rejected           text NOT NULL DEFAULT '',
		PRIMARY KEY (backend, kind, name)
	);`,
	// 8: each person's own credentials (store/personal.go), sealed.
	`CREATE TABLE personal_credentials (
		principal  text NOT NULL,
		backend    text NOT NULL,
		sealed     bytea NOT NULL,
		updated_at bigint NOT NULL,
		PRIMARY KEY (principal, backend)
	);`,
	// 9: whom a call was made as at the backend (a per_user backend's).
	`ALTER TABLE audit ADD COLUMN upstream text NOT NULL DEFAULT '';`,
	// 10: the policy rule that denied a call.
	`ALTER TABLE audit ADD COLUMN rule text NOT NULL DEFAULT '';`,
	// 11: what the redactor took out of an answer.
	`ALTER TABLE audit ADD COLUMN redacted text NOT NULL DEFAULT '';`,
	// 12: what interceptors came to, other than allowing or denying.
	`ALTER TABLE audit ADD COLUMN hooks text NOT NULL DEFAULT '';`,
	// 13: how far the store holds each replica's audit journal
	// (Options.JournalDir).
	`CREATE TABLE audit_journals (
		id   text PRIMARY KEY,
		mark bigint NOT NULL
	);`,
	// 14: the transaction that wrote each record, for the live tail
	// (unseenSince). Rows from before have none: no rewrite of the table.
	// PostgreSQL 13 or later.
	`ALTER TABLE audit ADD COLUMN xact bigint;
	ALTER TABLE audit ALTER COLUMN xact SET DEFAULT pg_current_xact_id()::text::bigint;
	CREATE INDEX audit_xact ON audit USING brin (xact);`,
}

// migrationLock is the advisory lock key of the migrations ("mcpgate").
const migrationLock = 0x6d6370676174

func (s *Store) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)`); err != nil {
			return fmt.Errorf("schema version: %w", err)
		}
		var version int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&version); err != nil {
			return fmt.Errorf("schema version: %w", err)
		}
		if version > len(migrations) {
			return fmt.Errorf("schema version %d is newer than this mcpgate knows (%d)", version, len(migrations))
		}
		for i := version; i < len(migrations); i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if version < len(migrations) {
			if _, err := tx.Exec(ctx, `DELETE FROM schema_version`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, len(migrations)); err != nil {
				return err
			}
		}
		return nil
	})
}

// CreateToken saves t; store.ErrDuplicate if its id or hash is taken.
func (s *Store) CreateToken(ctx context.Context, t store.Token) error {
	_, err := s.pool.Exec(ctx,
		`INSERT INTO tokens (id, name, role, hash, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		t.ID, t.Name, t.Role, t.Hash, store.EncodeTime(t.CreatedAt), store.EncodeTime(t.ExpiresAt), store.EncodeTime(t.RevokedAt))
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		// The server's message names the constraint, not the value.
		return fmt.Errorf("postgres: create token %s: %w (%s)", t.ID, store.ErrDuplicate, pe.ConstraintName)
	}
	if err != nil {
		return fmt.Errorf("postgres: create token %s: %w", t.ID, err)
	}
	return nil
}

// Tokens returns every token, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+store.TokenColumns+" FROM tokens ORDER BY created_at, id")
	if err != nil {
		return nil, fmt.Errorf("postgres: tokens: %w", err)
	}
	defer rows.Close()
	out, err := store.ScanTokens(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: tokens: %w", err)
	}
	return out, nil
}

// RevokeToken marks the token revoked at at; one revoked already keeps its
// first revocation time.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	key := store.Storable(id) // an id no store holds is not found
	tag, err := s.pool.Exec(ctx, `UPDATE tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at = 0`, key, store.EncodeTime(at))
	if err != nil {
		return fmt.Errorf("postgres: revoke token %s: %w", id, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tokens WHERE id = $1)`, key).Scan(&exists); err != nil {
		return fmt.Errorf("postgres: revoke token %s: %w", id, err)
	}
	if !exists {
		return fmt.Errorf("postgres: revoke token %s: %w", id, store.ErrNotFound)
	}
	return nil // revoked before
}

// auditCopyFrom is the size from which a batch of records is sent by COPY.
const auditCopyFrom = 32

// auditInsertOne is the INSERT of one record, a parameter per column.
// One multi-row INSERT per group was tried instead of a batch of these:
// the harness's mcpgate-pg-redis row fell from 0.79 and 0.75 to 0.66 and
// 0.65 of mcpgate-http, interleaved, with 20% more CPU per call.
var auditInsertOne = store.AuditInsert(1, postgresDialect.Arg)

// AppendAudit writes records with one batch of INSERTs, or from
// auditCopyFrom on with one COPY: all of them or none, in order.
func (s *Store) AppendAudit(ctx context.Context, records []store.AuditRecord) error {
	if len(records) == 0 {
		return nil
	}
	if err := appendAudit(ctx, s.pool, records); err != nil {
		return fmt.Errorf("postgres: append %d audit records: %w", len(records), refusedOr(err))
	}
	return nil
}

// refusedOr is err, with store.ErrRefused when PostgreSQL refused the
// data itself: a data exception (SQLSTATE class 22) or a violated
// constraint (class 23).
func refusedOr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "23")) {
		return fmt.Errorf("%w: %w", store.ErrRefused, err)
	}
	return err
}

// appendAudit writes records on q (the pool, or a transaction): a small
// group as one pipelined batch of INSERTs, from auditCopyFrom on one COPY.
func appendAudit(ctx context.Context, q interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error)
}, records []store.AuditRecord) error {
	if len(records) < auditCopyFrom {
		// A group commit's few records: one-row INSERTs sent as one batch,
		// a single round trip and one implicit transaction (COPY takes
		// several round trips).
		var b pgx.Batch
		for _, r := range records {
			b.Queue(auditInsertOne, store.AppendAuditValues(nil, r)...)
		}
		return q.SendBatch(ctx, &b).Close()
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"audit"}, store.AuditColumnList, pgx.CopyFromSlice(len(records), func(i int) ([]any, error) {
		return store.AppendAuditValues(nil, records[i]), nil
	}))
	return err
}

// AuditJournal is the path prefix of the audit journals of this replica's
// folder (Options.JournalDir), or "" without one: the group commit then
// waits for the database.
func (s *Store) AuditJournal() string {
	if s.journalDir == "" {
		return ""
	}
	return filepath.Join(s.journalDir, "mcpgate-audit")
}

// AppendAuditThrough writes records and sets journal id's mark to seq, in
// one transaction.
func (s *Store) AppendAuditThrough(ctx context.Context, records []store.AuditRecord, id string, seq uint64) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := appendAudit(ctx, tx, records); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO audit_journals (id, mark) VALUES ($1, $2)
			ON CONFLICT (id) DO UPDATE SET mark = excluded.mark`, id, int64(seq))
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: append %d audit records through %s:%d: %w", len(records), id, seq, refusedOr(err))
	}
	return nil
}

// AuditJournalMark is the mark AppendAuditThrough last set for journal
// id, 0 for none.
func (s *Store) AuditJournalMark(ctx context.Context, id string) (uint64, error) {
	var mark int64
	err := s.pool.QueryRow(ctx, `SELECT mark FROM audit_journals WHERE id = $1`, id).Scan(&mark)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: audit journal mark: %w", err)
	}
	return uint64(mark), nil
}

// ForgetAuditJournal deletes journal id's mark.
func (s *Store) ForgetAuditJournal(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM audit_journals WHERE id = $1`, id); err != nil {
		return fmt.Errorf("postgres: forget audit journal %s: %w", id, err)
	}
	return nil
}

// postgresDialect is PostgreSQL's SQL for store.AuditWhere.
var postgresDialect = store.Dialect{
	Arg:      func(i int) string { return "$" + strconv.Itoa(i) },
	Contains: func(col, arg string) string { return "strpos(" + col + ", " + arg + ") > 0" },
	Unseen:   unseenSince,
}

// A page's Head on PostgreSQL is "s" and the snapshot the page was read
// in (pg_current_snapshot: xmin:xmax:xip,…). Replicas write at once, so
// a record of a lower id may commit after one of a higher id: a tail by
// id would never show it. What a snapshot had not seen is exactly what
// transactions at or past its xmax wrote, and those it saw in progress.
const snapshotHead = "s"

// unseenSince is the condition for the records the snapshot of head had
// not seen; false for a head that names none.
func unseenSince(head string, arg func(v any) string) (string, bool) {
	snap, ok := strings.CutPrefix(head, snapshotHead)
	if !ok {
		return "", false
	}
	parts := strings.Split(snap, ":")
	if len(parts) != 3 {
		return "", false
	}
	xmax, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return "", false
	}
	inProgress := []int64{}
	if parts[2] != "" {
		for _, x := range strings.Split(parts[2], ",") {
			xid, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return "", false
			}
			inProgress = append(inProgress, xid)
		}
	}
	return "(xact >= " + arg(xmax) + " OR xact = ANY(" + arg(inProgress) + "))", true
}

// QueryAudit returns one page of the records q selects, newest first. The
// page is read in one snapshot, which its Head names (unseenSince).
func (s *Store) QueryAudit(ctx context.Context, q store.AuditQuery) (store.AuditPage, error) {
	where, args, err := store.AuditWhere(q, postgresDialect)
	if err != nil {
		return store.AuditPage{}, err
	}
	order, args := store.AuditPageOrder(q, postgresDialect, args)
	var page store.AuditPage
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var snap string
		if err := tx.QueryRow(ctx, `SELECT pg_current_snapshot()::text`).Scan(&snap); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT id, "+store.AuditColumns+" FROM audit"+where+order, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if page, err = store.ScanAuditPage(rows, q); err != nil {
			return err
		}
		page.Head = snapshotHead + snap
		return nil
	})
	if err != nil {
		return store.AuditPage{}, fmt.Errorf("postgres: query audit: %w", err)
	}
	return page, nil
}

// TailAudit returns the latest n records by time (ties in the order they
// were written), oldest first.
func (s *Store) TailAudit(ctx context.Context, n int) ([]store.AuditRecord, error) {
	if n <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, "SELECT "+store.AuditColumns+`
		FROM (SELECT * FROM audit ORDER BY time DESC, id DESC LIMIT $1) latest
		ORDER BY time, id`, n)
	if err != nil {
		return nil, fmt.Errorf("postgres: tail audit: %w", err)
	}
	defer rows.Close()
	out, err := store.ScanAudit(rows, n)
	if err != nil {
		return nil, fmt.Errorf("postgres: tail audit: %w", err)
	}
	return out, nil
}
