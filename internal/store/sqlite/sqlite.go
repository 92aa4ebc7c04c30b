// Package sqlite is the default store.Store: one SQLite file, through the
// pure-Go modernc.org/sqlite driver so that the binary stays static.
//
// The file is shared by two kinds of process at once: the server, and the
// `mcpgate token` command a person runs beside it. So every connection
// waits on a lock (busy_timeout) instead of failing, and the journal is
// WAL, so that readers never block the writer. Every transaction takes the
// write lock when it begins (BEGIN IMMEDIATE). One that read first and then
// tried to write could fail with SQLITE_BUSY at once, a case the busy
// timeout does not cover.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // and registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcpgate/mcpgate/internal/store"
)

// busyTimeoutMS is how long a statement waits for another connection's
// lock (another process's, in practice) before it fails.
const busyTimeoutMS = 5000

// Store is a store.Store on one SQLite file. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string // the database file, absolute
	// writeMu queues this process's writers in Go, in order, instead of
	// leaving them to SQLite's busy handler, which polls with sleeps and
	// is unfair under many concurrent writers. The busy timeout remains
	// for writers in other processes.
	writeMu sync.Mutex
	// audit is the connection the audit log is written on (nil until the
	// first append, and after a failed one); writeMu guards it.
	audit *auditConn
	// readStmts are the reads of oauthRead, each prepared once.
	readMu    sync.Mutex
	readStmts map[string]*sql.Stmt
	// OAuthSQL is the authorization server's part, over oauthTx.
	store.OAuthSQL
	// PinSQL is the catalogue's pins, over oauthTx.
	store.PinSQL
}

var _ store.Store = (*Store)(nil)

// Open opens the database at path, creating it (mode 0600, its missing
// parent directories 0700) when it does not exist, and brings its schema
// up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := create(abs); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	s := &Store{db: db, path: abs}
	s.OAuthSQL = store.OAuthSQL{Tx: s.oauthTx, Read: s.oauthRead, Name: "sqlite", IsDuplicate: isUniqueViolation}
	s.PinSQL = store.PinSQL{Tx: s.oauthTx}
	if err := s.migrateWhenFree(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", abs, err)
	}
	return s, nil
}

// migrateWhenFree is migrate, tried again while a new connection is
// refused SQLITE_BUSY, within the busy timeout. Several processes opening
// one new file at once race to switch it to WAL, and the loser's switch
// (made as its connection opens) answers SQLITE_BUSY at once: SQLite does
// not call the busy handler there. Once the file is in WAL mode, the
// switch is a no-op and this never repeats.
func (s *Store) migrateWhenFree(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeoutMS * time.Millisecond)
	for wait := 2 * time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := s.migrate(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// Close closes the database.
func (s *Store) Close() error {
	s.writeMu.Lock()
	if s.audit != nil {
		s.audit.close()
		s.audit = nil
	}
	s.writeMu.Unlock()
	return s.db.Close()
}

// Ping runs the cheapest query, so that a file gone or locked shows.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// create makes the file before SQLite does, so that it is born 0600: it
// holds who called what. SQLite gives the -wal and -shm files the mode of
// the database file.
func create(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return f.Close()
}

// dsn is the URI SQLite opens path with. The pragmas are set on every
// connection of the pool, as each new connection is made.
func dsn(path string) string {
	// In a file: URI, '?' and '#' would end the path and '%' starts an
	// escape.
	escaped := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + escaped +
		fmt.Sprintf("?_pragma=busy_timeout(%d)", busyTimeoutMS) +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)" +
		"&_pragma=foreign_keys(1)" +
		"&_txlock=immediate"
}

// write runs fn in one write transaction.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
