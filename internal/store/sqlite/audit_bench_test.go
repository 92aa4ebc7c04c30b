package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
)

// BenchmarkAppendAudit256 writes the audit writer's default batch (256
// records, as a busy gateway's batches are); ns/op is per batch.
func BenchmarkAppendAudit256(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background()) // as the audit writer's, cancellable
	defer cancel()
	s := openStore(b, dbPath(b))
	batch := make([]store.AuditRecord, 256)
	for i := range batch {
		batch[i] = store.AuditRecord{Time: time.Now(), Subject: "bench", TokenID: "tok_1", Role: "admin",
			Kind: "tool", Name: "test_simple_text", Backend: "fixture", Outcome: "ok", Duration: 80 * time.Microsecond}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.AppendAudit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}
