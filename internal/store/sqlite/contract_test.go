package sqlite_test

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/storetest"
)

// The store contract, on a fresh SQLite file each test.
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openStore(t, dbPath(t)) })
}
