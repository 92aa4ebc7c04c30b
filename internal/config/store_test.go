package config

import (
	"errors"
	"strings"
	"testing"
)

// The store is a SQLite path or a postgres:// URL; a URL never carries a
// password (PGPASSWORD or store_password_file does), and the refusal
// names the key without quoting the password.
func TestStoreKey(t *testing.T) {
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
