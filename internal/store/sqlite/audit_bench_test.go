package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
)

// BenchmarkAppendAudit256 writes the audit writer's default batch (256
// records, as a busy gateway's batches are); ns/op is per batch.
func BenchmarkAppendAudit256(b *testing.B) { benchmarkAppendAudit(b, 256) }

// The batches of a group commit under load: a few records each.
func BenchmarkAppendAudit1(b *testing.B) { benchmarkAppendAudit(b, 1) }
func BenchmarkAppendAudit4(b *testing.B) { benchmarkAppendAudit(b, 4) }

func benchmarkAppendAudit(b *testing.B, n int) {
	ctx, cancel := context.WithCancel(context.Background()) // as the audit writer's, cancellable
	defer cancel()
	s := openStore(b, dbPath(b))
	batch := make([]store.AuditRecord, n)
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
