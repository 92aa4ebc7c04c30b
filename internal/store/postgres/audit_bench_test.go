package postgres_test

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/storetest"
)

func openBench(b testing.TB) store.Store { return openStore(b, freshDB(b)) }

func BenchmarkAppendAudit1(b *testing.B)   { storetest.BenchmarkAppendAudit(b, openBench, 1) }
func BenchmarkAppendAudit4(b *testing.B)   { storetest.BenchmarkAppendAudit(b, openBench, 4) }
func BenchmarkAppendAudit256(b *testing.B) { storetest.BenchmarkAppendAudit(b, openBench, 256) }
