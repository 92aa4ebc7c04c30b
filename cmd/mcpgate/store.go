// store.go opens the configured store: SQLite, or PostgreSQL for a
// postgres:// URL (the password from store_password_file, or the
// driver's PGPASSWORD and ~/.pgpass).

package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/postgres"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
)

func openStore(ctx context.Context, cfg *config.Config) (store.Store, error) {
	if !config.StoreIsPostgres(cfg.Store) {
		return sqlite.Open(ctx, cfg.Store)
	}
	o := postgres.Options{JournalDir: cfg.Audit.JournalDir}
	if cfg.StorePasswordFile != "" {
		b, err := os.ReadFile(cfg.StorePasswordFile)
		if err != nil {
			return nil, fmt.Errorf("store_password_file: %w", err) // names the file, never its content
		}
		o.Password = strings.TrimRight(string(b), "\r\n")
	}
	return postgres.Open(ctx, cfg.Store, o)
}
