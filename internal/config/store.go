// store.go is the store key: a SQLite file (the default, one machine), or
// a PostgreSQL URL (postgres://…, shared by replicas). The URL never
// carries a password: it comes from the environment (PGPASSWORD, read by
// the driver, or ~/.pgpass) or from store_password_file.

package config

import (
	"net/url"
	"strings"
)

// StoreIsPostgres reports whether the store names a PostgreSQL database.
func StoreIsPostgres(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// StoreDisplay is the store as it may be shown: a URL without its user
// information's password (there is none in a valid one; this is for what
// a flag gave before validation refused it).
func StoreDisplay(store string) string {
	if !StoreIsPostgres(store) {
		return store
	}
	u, err := url.Parse(store)
	if err != nil {
		return "postgres://(unreadable URL)"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

func (c *Config) validateStore() error {
	if err := c.validateAuditJournal(); err != nil {
		return err
	}
	if !StoreIsPostgres(c.Store) {
		if c.StorePasswordFile != "" {
			return bad("store_password_file", "is for a PostgreSQL store (store: postgres://…)")
		}
		return nil
	}
	u, err := url.Parse(c.Store)
	if err != nil || u.Host == "" {
		return bad("store", "not a postgres://HOST/DATABASE URL")
	}
	_, inUser := u.User.Password()
	if inUser || u.Query().Has("password") {
		return bad("store", "must not carry a password: set PGPASSWORD in the environment, or store_password_file")
	}
	return nil
}

// validateAuditJournal checks where the audit journal goes: SQLite keeps it
// beside the database, PostgreSQL in audit.journal_dir or not at all.
func (c *Config) validateAuditJournal() error {
	a := c.Audit
	switch {
	case a.JournalDir == "":
		if StoreIsPostgres(c.Store) && a.Journal != nil && *a.Journal && !a.Async && !a.Disabled {
			return bad("audit.journal", "on a PostgreSQL store needs audit.journal_dir, a folder on this replica's own disk")
		}
	case !StoreIsPostgres(c.Store):
		return bad("audit.journal_dir", "is for a PostgreSQL store: SQLite keeps its journal beside the database")
	case a.Async:
		return bad("audit.journal_dir", "is the group commit's, and audit.async turns the group commit off")
	case a.Journal != nil && !*a.Journal:
		return bad("audit.journal_dir", "is set while audit.journal is false")
	}
	return nil
}
