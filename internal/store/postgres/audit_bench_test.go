package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
)

// The batches of a group commit under load are a few records each; an
// async batch is up to 256.
func BenchmarkAppendAudit1(b *testing.B)   { benchmarkAppendAudit(b, 1) }
func BenchmarkAppendAudit4(b *testing.B)   { benchmarkAppendAudit(b, 4) }
func BenchmarkAppendAudit256(b *testing.B) { benchmarkAppendAudit(b, 256) }

func benchmarkAppendAudit(b *testing.B, n int) {
	s := openStore(b, freshDB(b))
	batch := make([]store.AuditRecord, n)
	for i := range batch {
		batch[i] = store.AuditRecord{Time: time.Now(), Subject: "bench", TokenID: "tok_1", Role: "admin",
			Kind: "tool", Name: "test_simple_text", Backend: "fixture", Outcome: "ok", Duration: 80 * time.Microsecond}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.AppendAudit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}
