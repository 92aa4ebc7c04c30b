package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/config"
)

// A wire backend's database may come from the environment or a file, as a
// URL whose credentials are dropped: the spec holds the address alone, and
// an error names the variable or the file, never the value.
func TestAWireBackendsDatabaseFromTheEnvironmentOrAFile(t *testing.T) {
	t.Setenv("MCPGATE_TEST_PG", "postgres://app:hunter2@db.internal:6000/app")
	file := filepath.Join(t.TempDir(), "pg")
	if err := os.WriteFile(file, []byte("postgres://app:hunter3@db.file:7000/app\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		yaml, want string
	}{
		{"postgres_from: MCPGATE_TEST_PG", "db.internal:6000"},
		{"postgres_file: " + file, "db.file:7000"},
		{"postgres: \"db.plain:5432\"", "db.plain:5432"},
	} {
		cfg, err := config.Parse([]byte("backends: [{name: a, kind: proxy, url: \"ws://h:1\", " + tc.yaml + "}]"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := backendSpec("backends[0]", cfg.Backends[0], nil, nil)
		if err != nil || s.Postgres != tc.want {
			t.Errorf("%s: %q %v, want %s", tc.yaml, s.Postgres, err, tc.want)
		}
	}
	t.Setenv("MCPGATE_TEST_PG", "hunter2")
	cfg, _ := config.Parse([]byte("backends: [{name: a, kind: proxy, url: \"ws://h:1\", postgres_from: MCPGATE_TEST_PG}]"))
	if _, err := backendSpec("backends[0]", cfg.Backends[0], nil, nil); err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "MCPGATE_TEST_PG") {
		t.Errorf("a bad value from the environment: %v", err)
	}
}
