// audit_test.go pins the audit half of store.Store: every field comes back
// exactly (durations to the microsecond), concurrent batches all land, and
// TailAudit returns the latest n, oldest first.

package sqlite_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/store"
)

func TestAuditRoundTripsEveryField(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	want := []store.AuditRecord{
		{Time: time.Date(2026, 4, 1, 10, 0, 0, 123456789, time.UTC), Subject: "alice", TokenID: "tok_1", Role: "editor",
			Kind: "tool", Name: "deploy", Backend: "github", Outcome: "forbidden", Code: -32001,
			Duration: 1500 * time.Microsecond},
		{Time: time.Date(2026, 4, 1, 10, 0, 0, 123456790, time.UTC), Subject: "bob", Role: "viewer",
			Kind: "resource", Name: "x://rows/7", Outcome: "ok"},
		{Time: time.Date(2026, 4, 1, 10, 0, 1, 0, time.UTC), Subject: "ünïcode ✓", Kind: "prompt", Name: "review",
			Outcome: "error", Code: -32603, Duration: 90 * time.Minute},
	}
	if err := s.AppendAudit(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.TailAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestAuditZeroTimeAndSubMicrosecondDuration(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	in := store.AuditRecord{Kind: "tool", Name: "t", Duration: 1999 * time.Nanosecond}
	if err := s.AppendAudit(ctx, []store.AuditRecord{in}); err != nil {
		t.Fatal(err)
	}
	got, err := s.TailAudit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !got[0].Time.IsZero() {
		t.Errorf("zero time came back as %v", got[0].Time)
	}
	if got[0].Duration != time.Microsecond {
		t.Errorf("duration %v, want it truncated to 1µs", got[0].Duration)
	}
}

func TestAppendAuditEmptyBatch(t *testing.T) {
	s := openStore(t, dbPath(t))
	if err := s.AppendAudit(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentAppendAuditAllPersisted(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	const writers, batches, size = 32, 10, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches)
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				recs := make([]store.AuditRecord, size)
				for i := range recs {
					recs[i] = store.AuditRecord{Time: time.Now().UTC(), Kind: "tool", Name: fmt.Sprintf("%d/%d/%d", w, b, i)}
				}
				errs <- s.AppendAudit(ctx, recs)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TailAudit(ctx, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range got {
		seen[r.Name]++
	}
	if len(got) != writers*batches*size || len(seen) != len(got) {
		t.Fatalf("%d records, %d distinct, want %d of each", len(got), len(seen), writers*batches*size)
	}
}

func TestTailAuditLatestOldestFirst(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	at := func(sec int) time.Time { return time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC) }
	// Written out of time order, as concurrent calls that finish in
	// another order than they arrived are; two share a time.
	for _, r := range []struct {
		name string
		sec  int
	}{{"c", 3}, {"a", 1}, {"d", 4}, {"b1", 2}, {"b2", 2}} {
		if err := s.AppendAudit(ctx, []store.AuditRecord{{Time: at(r.sec), Name: r.name}}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		n    int
		want []string
	}{
		{-1, nil},
		{0, nil},
		{1, []string{"d"}},
		{3, []string{"b2", "c", "d"}},
		{4, []string{"b1", "b2", "c", "d"}},
		{100, []string{"a", "b1", "b2", "c", "d"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			got, err := s.TailAudit(ctx, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range got {
				names = append(names, r.Name)
			}
			if !reflect.DeepEqual(names, tt.want) {
				t.Fatalf("TailAudit(%d) = %v, want %v", tt.n, names, tt.want)
			}
		})
	}
}

// A batch larger than one INSERT's rows is written whole and in order,
// across full statements and the remainder.
func TestAppendAuditBatchAcrossInsertsKeepsOrder(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, dbPath(t))
	at := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	want := make([]store.AuditRecord, 2*64+3) // two full INSERTs of 64 rows and a remainder
	for i := range want {
		// One instant for all: their order is the order written.
		want[i] = store.AuditRecord{Time: at, Subject: "s", Kind: "tool", Name: fmt.Sprint("t", i), Outcome: "ok", Code: int64(i)}
	}
	if err := s.AppendAudit(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.TailAudit(ctx, len(want)+10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d records, want %d in order; first differing: %v", len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(got, want []store.AuditRecord) string {
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("#%d got %+v want %+v", i, got[i], want[i])
		}
	}
	return "lengths"
}
