// log_test.go pins the Log's contract: batches by size and by time,
// nothing lost and nothing written twice — across write failures, under
// concurrent callers, on a clean Close — and Record waiting rather than
// dropping when the queue is full.

package audit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/observe/audit"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func rec(i int) store.AuditRecord {
	return store.AuditRecord{Kind: "tool", Name: strconv.Itoa(i), Outcome: "ok"}
}

func record(t testing.TB, l *audit.Log, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := l.Record(rec(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// names returns the record names, which the tests number.
func names(recs []store.AuditRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Name
	}
	return out
}

func numbered(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

func TestFullBatchIsOneWrite(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{BatchSize: 4, FlushEvery: time.Hour})
	record(t, l, 0, 4)
	if n := wait(t, w.wrote, "a full batch to be written"); n != 4 {
		t.Fatalf("first write of %d records, want 4", n)
	}
	record(t, l, 4, 6)
	closeLog(t, l)
	if got := w.batchSizes(); !slices.Equal(got, []int{4, 2}) {
		t.Fatalf("batches %v, want [4 2]: a full batch, then the rest at Close", got)
	}
	if got := names(w.records()); !slices.Equal(got, numbered(0, 6)) {
		t.Fatalf("records %v", got)
	}
}

func TestPartialBatchIsWrittenAfterFlushEvery(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{BatchSize: 1000, FlushEvery: 5 * time.Millisecond})
	defer closeLog(t, l)
	record(t, l, 0, 3)
	if n := wait(t, w.wrote, "the timer to flush a partial batch"); n != 3 {
		t.Fatalf("flushed %d records, want 3", n)
	}
	record(t, l, 3, 4)
	if n := wait(t, w.wrote, "a second timed flush"); n != 1 {
		t.Fatalf("flushed %d records, want 1", n)
	}
}

func TestCloseWritesEverythingOnceInOrder(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{})
	const n = 10_000
	record(t, l, 0, n)
	closeLog(t, l)
	if got := names(w.records()); !slices.Equal(got, numbered(0, n)) {
		t.Fatalf("%d records written, want %d in order", len(got), n)
	}
	st := l.Stats()
	if st.Recorded != n || st.Written != n || st.Queued != 0 || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
	if st.MaxQueued < 1 || st.MaxQueued > n {
		t.Fatalf("max queued %d", st.MaxQueued)
	}
}

func TestFailedWritesAreRetriedNothingLostNothingTwice(t *testing.T) {
	w := newFakeWriter()
	w.failFirst = 3
	var logs bytes.Buffer
	l := audit.NewLog(w, audit.Options{BatchSize: 4, FlushEvery: time.Millisecond, RetryDelay: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	record(t, l, 0, 10)
	closeLog(t, l)
	if got := names(w.records()); !slices.Equal(got, numbered(0, 10)) {
		t.Fatalf("records %v, want each of 0..9 once, in order", got)
	}
	if st := l.Stats(); st.WriteErrors != 3 || st.Written != 10 || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
	if !strings.Contains(logs.String(), "disk on fire") {
		t.Fatalf("the write error was not logged:\n%s", logs.String())
	}
}

func TestConcurrentRecordEveryRecordOnce(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{BatchSize: 64, Buffer: 128})
	const callers, each = 64, 200
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				if err := l.Record(store.AuditRecord{Subject: strconv.Itoa(c), Name: strconv.Itoa(i)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	closeLog(t, l)
	next := make([]int, callers) // each caller's records arrive in its order
	for _, r := range w.records() {
		c, _ := strconv.Atoi(r.Subject)
		if r.Name != strconv.Itoa(next[c]) {
			t.Fatalf("caller %d: record %s, want %d", c, r.Name, next[c])
		}
		next[c]++
	}
	for c, n := range next {
		if n != each {
			t.Fatalf("caller %d: %d records written, want %d", c, n, each)
		}
	}
}

func TestFullQueueBlocksRecordInsteadOfDropping(t *testing.T) {
	w := newFakeWriter()
	w.hold = make(chan struct{})
	l := audit.NewLog(w, audit.Options{BatchSize: 1, Buffer: 2})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := range 5 { // one being written, two queued, the rest must wait
			if err := l.Record(rec(i)); err != nil {
				t.Error(err)
			}
		}
	}()
	testkit.WaitFor(t, "a Record to wait for room", func() bool { return l.Stats().Blocked > 0 })
	select {
	case <-finished:
		t.Fatal("every Record returned while the writer held the queue full")
	default:
	}
	close(w.hold)
	wait(t, finished, "the waiting Records")
	closeLog(t, l)
	if got := names(w.records()); !slices.Equal(got, numbered(0, 5)) {
		t.Fatalf("records %v", got)
	}
}

func TestCloseGivesUpAtItsDeadline(t *testing.T) {
	w := newFakeWriter()
	w.failAll = true
	l := audit.NewLog(w, audit.Options{BatchSize: 2, FlushEvery: time.Millisecond, RetryDelay: time.Millisecond})
	record(t, l, 0, 5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := l.Close(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "5 records") {
		t.Fatalf("Close: %v, want the deadline and the 5 records lost", err)
	}
	if st := l.Stats(); st.Lost != 5 || st.Queued != 0 || st.Written != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCloseCancelsAHangingWrite(t *testing.T) {
	w := newFakeWriter()
	w.hold = make(chan struct{}) // never released: the write waits for its context
	l := audit.NewLog(w, audit.Options{BatchSize: 1})
	record(t, l, 0, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := l.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v", err)
	}
	if st := l.Stats(); st.Lost != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRecordAfterCloseIsRefusedAndLogged(t *testing.T) {
	var logs bytes.Buffer
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	closeLog(t, l)
	closeLog(t, l) // a second Close is harmless
	if err := l.Record(rec(1)); !errors.Is(err, audit.ErrClosed) {
		t.Fatalf("Record after Close: %v", err)
	}
	if st := l.Stats(); st.Refused != 1 || st.Recorded != 0 {
		t.Fatalf("stats %+v", st)
	}
	if !strings.Contains(logs.String(), "refused") {
		t.Fatalf("the refusal was not logged:\n%s", logs.String())
	}
	if len(w.records()) != 0 {
		t.Fatal("a record after Close was written")
	}
}

func TestCloseGivingUpReleasesWaitingRecords(t *testing.T) {
	w := newFakeWriter()
	w.hold = make(chan struct{}) // never released
	l := audit.NewLog(w, audit.Options{BatchSize: 1, Buffer: 1})
	record(t, l, 0, 1)
	wait(t, w.entered, "the writer to take the first record")
	record(t, l, 1, 2) // fills the queue
	refused := make(chan error)
	go func() { refused <- l.Record(rec(2)) }()
	testkit.WaitFor(t, "a Record to wait for room", func() bool { return l.Stats().Blocked > 0 })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := l.Close(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "2 records") {
		t.Fatalf("Close: %v, want the deadline and 2 records lost", err)
	}
	if err := wait(t, refused, "the waiting Record to return"); !errors.Is(err, audit.ErrClosed) {
		t.Fatalf("the waiting Record returned %v, want ErrClosed", err)
	}
	if st := l.Stats(); st.Lost != 2 || st.Refused != 1 || st.Recorded != 2 || st.Queued != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestConcurrentClosesBothWaitForTheFlush(t *testing.T) {
	w := newFakeWriter()
	l := audit.NewLog(w, audit.Options{BatchSize: 7})
	record(t, l, 0, 100)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if err := l.Close(context.Background()); err != nil {
				t.Error(err)
			}
			if n := len(w.records()); n != 100 {
				t.Errorf("Close returned with %d of 100 records written", n)
			}
		})
	}
	wg.Wait()
}

// With Wait, Record is a group commit: it returns only once its record is
// written; the writer takes every record waiting at that moment into one
// write; an idle log writes a lone record at once.

func TestWaitingRecordReturnsOnlyOnceWritten(t *testing.T) {
	w := newFakeWriter()
	w.hold = make(chan struct{})
	l := audit.NewLog(w, audit.Options{Wait: true, FlushEvery: time.Hour})
	defer closeLog(t, l)
	returned := make(chan error)
	go func() { returned <- l.Record(rec(0)) }()
	wait(t, w.entered, "the writer to begin the write")
	select {
	case err := <-returned:
		t.Fatalf("Record returned (%v) while its write was still in progress", err)
	default:
	}
	w.hold <- struct{}{}
	if err := wait(t, returned, "Record to return after the write"); err != nil {
		t.Fatal(err)
	}
	if got := names(w.records()); !slices.Equal(got, []string{"0"}) {
		t.Fatalf("written %v", got)
	}
}

func TestWaitingRecordsThatArriveDuringAWriteShareTheNext(t *testing.T) {
	w := newFakeWriter()
	w.hold = make(chan struct{})
	l := audit.NewLog(w, audit.Options{Wait: true})
	defer closeLog(t, l)
	var wg sync.WaitGroup
	wg.Go(func() { _ = l.Record(rec(0)) })
	wait(t, w.entered, "the first write to begin")
	for i := 1; i <= 10; i++ {
		wg.Go(func() { _ = l.Record(rec(i)) })
	}
	testkit.WaitFor(t, "ten records to queue behind the write", func() bool { return l.Stats().Queued == 11 })
	close(w.hold)
	wg.Wait()
	if got := w.batchSizes(); !slices.Equal(got, []int{1, 10}) {
		t.Fatalf("writes of %v records, want [1 10]: the ten that waited in one commit", got)
	}
}

func TestWaitingRecordOnAnIdleLogIsWrittenAtOnce(t *testing.T) {
	w := newFakeWriter()
	// An hour of FlushEvery: a Record that waited for it would time the
	// test out.
	l := audit.NewLog(w, audit.Options{Wait: true, FlushEvery: time.Hour})
	defer closeLog(t, l)
	done := make(chan error)
	go func() { done <- l.Record(rec(0)) }()
	if err := wait(t, done, "a lone record to be written"); err != nil {
		t.Fatal(err)
	}
}

func TestWaitingRecordsAreRetriedAndLostOnlyWhenCloseGivesUp(t *testing.T) {
	w := newFakeWriter()
	w.failAll = true
	l := audit.NewLog(w, audit.Options{Wait: true, RetryDelay: time.Millisecond})
	returned := make(chan error)
	go func() { returned <- l.Record(rec(0)) }()
	testkit.WaitFor(t, "the write to fail twice", func() bool { return l.Stats().WriteErrors >= 2 })
	select {
	case err := <-returned:
		t.Fatalf("Record returned (%v) while its write kept failing", err)
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
	if err := wait(t, returned, "the waiting Record to return"); !errors.Is(err, audit.ErrLost) {
		t.Fatalf("Record returned %v, want ErrLost", err)
	}
}

func TestWaitingRecordAllocatesNothingOfItsOwn(t *testing.T) {
	if testkit.Race {
		t.Skip("the race detector allocates on its own account, and sync.Pool drops at random under it")
	}
	l := audit.NewLog(discard{}, audit.Options{Wait: true})
	defer closeLog(t, l)
	r := rec(0)
	if n := testing.AllocsPerRun(200, func() { _ = l.Record(r) }); n > 0 {
		t.Fatalf("Record allocates %v times per call, want 0", n)
	}
}

type discard struct{}

func (discard) AppendAudit(context.Context, []store.AuditRecord) error { return nil }
