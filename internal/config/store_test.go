package config

import (
	"errors"
	"strings"
	"testing"
)

// The store is a SQLite path or a postgres:// URL; a URL never carries a
// password (PGPASSWORD or store_password_file does), and the refusal
// names the key without quoting the password. The audit journal's folder
// is a PostgreSQL store's only.
func TestStoreKey(t *testing.T) {
	const pg = "store: \"postgres://mcpgate@db/mcpgate\"\n"
	for _, tc := range []struct {
		name, yaml, key string // key: refused at; "" when valid
	}{
		{"a SQLite file", "store: /var/lib/mcpgate/m.db", ""},
		{"a PostgreSQL URL", "store: \"postgres://mcpgate@db.internal:5432/mcpgate?sslmode=require\"", ""},
		{"postgresql scheme", "store: \"postgresql://mcpgate@db/mcpgate\"", ""},
		{"no user", "store: \"postgres://db/mcpgate\"", ""},
		{"a password file", "store: \"postgres://mcpgate@db/mcpgate\"\nstore_password_file: /run/secrets/pg", ""},
		{"a password in the URL", "store: \"postgres://mcpgate:hunter2@db/mcpgate\"", "store"},
		{"a password in the query", "store: \"postgres://mcpgate@db/mcpgate?password=hunter2\"", "store"},
		{"no host", "store: \"postgres:///mcpgate\"", "store"},
		{"a password file for SQLite", "store: /m.db\nstore_password_file: /f", "store_password_file"},
		// The audit journal: beside a SQLite database, in journal_dir on
		// PostgreSQL, and never where the group commit is off.
		{"a journal folder on PostgreSQL", pg + "audit: {journal_dir: /var/lib/mcpgate/journal}", ""},
		{"a relative journal folder", pg + "audit: {journal_dir: journal}", ""},
		{"a journal folder, journal on", pg + "audit: {journal: true, journal_dir: /j}", ""},
		{"the journal on PostgreSQL without a folder", pg + "audit: {journal: true}", "audit.journal"},
		{"the journal off on PostgreSQL", pg + "audit: {journal: false}", ""},
		{"a journal folder for SQLite", "store: /m.db\naudit: {journal_dir: /j}", "audit.journal_dir"},
		{"a journal folder, journal off", pg + "audit: {journal: false, journal_dir: /j}", "audit.journal_dir"},
		{"a journal folder with async", pg + "audit: {async: true, journal_dir: /j}", "audit.journal_dir"},
		{"the journal on, with async", pg + "audit: {journal: true, async: true}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			var ke *KeyError
			switch {
			case tc.key == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.key != "" && (!errors.As(err, &ke) || ke.Key != tc.key):
				t.Fatalf("error %v, want a KeyError at %s", err, tc.key)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Fatalf("the refusal quotes the password: %v", err)
			}
		})
	}
	if got := StoreDisplay("postgres://u:hunter2@db/x"); strings.Contains(got, "hunter2") || !strings.Contains(got, "u@db/x") {
		t.Errorf("StoreDisplay = %q", got)
	}
}
