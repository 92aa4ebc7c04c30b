package audit

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// heldWriter counts what it writes; while hold is set, a write waits for
// it to be closed.
type heldWriter struct {
	mu      sync.Mutex
	hold    chan struct{}
	held    int // writes that waited for hold
	written int
}

func (w *heldWriter) AppendAudit(_ context.Context, records []store.AuditRecord) error {
	w.mu.Lock()
	hold := w.hold
	if hold != nil {
		w.held++
	}
	w.mu.Unlock()
	if hold != nil {
		<-hold
	}
	w.mu.Lock()
	w.written += len(records)
	w.mu.Unlock()
	return nil
}

func TestOnlyABatchsFirstRecordWakesTheWriter(t *testing.T) {
	w := &heldWriter{}
	l := NewLog(w, Options{BatchSize: 1000, FlushEvery: time.Hour})
	for range 100 {
		if err := l.Record(store.AuditRecord{Name: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, "the writer to take the first record", func() bool { return l.woken.Load() > 0 })
	if err := l.Close(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	if n := l.woken.Load(); n != 1 {
		t.Errorf("the writer woke %d times for one batch of 100 records, want once", n)
	}
	if w.written != 100 {
		t.Errorf("%d records written, want 100", w.written)
	}
}

func TestAGroupCommitYieldsOnlyAfterAGroupOfSeveral(t *testing.T) {
	var yields atomic.Int64
	yield = func() { yields.Add(1) }
	defer func() { yield = runtime.Gosched }()
	w := &heldWriter{}
	l := NewLog(w, Options{Wait: true})
	defer func() {
		if err := l.Close(testkit.Context(t)); err != nil {
			t.Error(err)
		}
	}()
	record := func() {
		if err := l.Record(store.AuditRecord{Name: "t"}); err != nil {
			t.Error(err)
		}
	}
	for range 10 {
		record()
	}
	if n := yields.Load(); n != 0 {
		t.Fatalf("one caller at a time: %d yields, want none", n)
	}
	// A first write held while three more records wait: the group after
	// it holds three, and the write after that yields.
	w.mu.Lock()
	w.hold = make(chan struct{})
	w.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(record)
	testkit.WaitFor(t, "the first write held", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.held == 1
	})
	for range 3 {
		wg.Go(record)
	}
	testkit.WaitFor(t, "three records waiting behind it", func() bool {
		l.group.mu.Lock()
		defer l.group.mu.Unlock()
		return len(l.group.recs) == 3
	})
	w.mu.Lock()
	close(w.hold)
	w.hold = nil
	w.mu.Unlock()
	wg.Wait()
	if n := yields.Load(); n != 0 {
		t.Fatalf("%d yields before a group of several was written, want none", n)
	}
	record()
	if n := yields.Load(); n != 1 {
		t.Errorf("after a group of three: %d yields, want 1", n)
	}
}

func TestAQueueSmallerThanABatchIsWrittenOnceFullNotAtFlushEvery(t *testing.T) {
	w := &heldWriter{}
	l := NewLog(w, Options{BatchSize: 1000, Buffer: 4, FlushEvery: time.Hour})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			if err := l.Record(store.AuditRecord{Name: "t"}); err != nil {
				t.Error(err)
			}
		}
	}()
	testkit.WaitFor(t, "20 records recorded through a queue of 4", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	if err := l.Close(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	if w.written != 20 {
		t.Errorf("%d records written, want 20", w.written)
	}
}
