// journal_test.go holds the journal's rules, on the real SQLite store:
// what a run that ended without writing its records leaves is written at
// the next start, once; a line cut short is skipped; segments are removed
// once stored; a journal that cannot be written falls back to the store.

package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func openStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func record(i int) store.AuditRecord {
	return store.AuditRecord{Time: time.Unix(1_700_000_000, int64(i)).UTC(), Subject: "alice \"quoted\"\n", TokenID: "tok_a",
		Role: "editor", Kind: "tool", Name: fmt.Sprintf("tool_%03d", i), Backend: "b", Outcome: "ok", Code: int64(-i), Duration: time.Duration(i) * time.Microsecond}
}

// names are the store's records' names, oldest first.
func names(t *testing.T, st store.Store) []string {
	t.Helper()
	recs, err := st.TailAudit(context.Background(), 100_000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Name
	}
	return out
}

func wantNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = record(i + 1).Name
	}
	return out
}

func segmentFiles(t *testing.T, prefix string) []string {
	t.Helper()
	paths, _, err := segments(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// storeDown refuses every write: records stay in the journal.
type storeDown struct{ *sqlite.Store }

func (storeDown) AppendAuditThrough(context.Context, []store.AuditRecord, uint64) error {
	return errors.New("store down")
}

func TestJournaledRecordsTheStoreNeverGotAreWrittenAtTheNextStartOnce(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "mcpgate.db")
	st := openStore(t, db)
	l, err := NewJournaledLog(ctx, storeDown{st}, Options{RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := l.Record(record(i + 1)); err != nil {
			t.Fatalf("record %d: %v (answered only once journaled)", i+1, err)
		}
	}
	// The run ends without the store having any of them.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Close(gone); err != nil {
		t.Fatalf("Close: %v (journaled records are not lost)", err)
	}
	if s := l.Stats(); s.Lost != 0 || s.Written != 0 {
		t.Fatalf("stats %+v: want none written and none lost", s)
	}
	if got := names(t, st); len(got) != 0 {
		t.Fatalf("store has %d records before the restart", len(got))
	}
	if len(segmentFiles(t, st.AuditJournal())) == 0 {
		t.Fatal("no journal left for the next start")
	}

	for range 2 { // the second start finds nothing more to write
		l, err := NewJournaledLog(ctx, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		shut(t, l)
		if got, want := names(t, st), wantNames(50); !equal(got, want) {
			t.Fatalf("store after restart: %d records %v, want %d", len(got), got, len(want))
		}
		if left := segmentFiles(t, st.AuditJournal()); len(left) != 0 {
			t.Fatalf("journal segments left after a clean close: %v", left)
		}
	}
	recs, _ := st.TailAudit(ctx, 1)
	if want := record(50); recs[0] != want {
		t.Fatalf("record read back from the journal:\n got %+v\nwant %+v", recs[0], want)
	}
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// writeSegment writes records from..to (sequence numbers) as segment n,
// with tail appended.
func writeSegment(t *testing.T, prefix string, n, from, to int, tail string) {
	t.Helper()
	var b []byte
	for i := from; i <= to; i++ {
		b = appendLine(b, uint64(i), record(i))
	}
	if err := os.WriteFile(segmentPath(prefix, n), append(b, tail...), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTheJournalWritesOnlyWhatTheStoreLacks(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	// The store wrote 1..6 (and moved its mark) before the process died,
	// but the segments were not yet removed.
	first := []store.AuditRecord{record(1), record(2), record(3), record(4), record(5), record(6)}
	if err := st.AppendAuditThrough(ctx, first, 6); err != nil {
		t.Fatal(err)
	}
	writeSegment(t, st.AuditJournal(), 3, 1, 4, "")
	writeSegment(t, st.AuditJournal(), 4, 5, 10, "")
	l, err := NewJournaledLog(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// New records continue the sequence past what the journal held.
	if err := l.Record(record(11)); err != nil {
		t.Fatal(err)
	}
	shut(t, l)
	if got, want := names(t, st), wantNames(11); !equal(got, want) {
		t.Fatalf("store: %v, want %v", got, want)
	}
	if mark, _ := st.AuditJournalMark(ctx); mark != 11 {
		t.Fatalf("mark %d, want 11", mark)
	}
}

func TestAJournalLineCutShortIsSkippedAndSaidSo(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	cut := string(appendLine(nil, 4, record(4)))
	writeSegment(t, st.AuditJournal(), 1, 1, 3, cut[:len(cut)/2])
	var logged bytes.Buffer
	l, err := NewJournaledLog(ctx, st, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	shut(t, l)
	if got, want := names(t, st), wantNames(3); !equal(got, want) {
		t.Fatalf("store: %v, want %v", got, want)
	}
	if !strings.Contains(logged.String(), "journal lines unreadable") || !strings.Contains(logged.String(), "lines=1") {
		t.Fatalf("log does not say a line was skipped:\n%s", logged.String())
	}
}

func TestStoredJournalSegmentsAreRemoved(t *testing.T) {
	defer func(n int64) { segmentBytes = n }(segmentBytes)
	segmentBytes = 1000 // a few records a segment
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	l, err := NewJournaledLog(ctx, st, Options{BatchSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := l.Record(record(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	// The store writer has written some batches by the time the last
	// group is journaled; wait for all of them.
	testkit.WaitFor(t, "every record stored", func() bool { return l.Stats().Written == 200 })
	if l.j.index < 20 {
		t.Fatalf("%d segments for 200 records of some 200 bytes, want 20 or more", l.j.index)
	}
	if left := segmentFiles(t, st.AuditJournal()); len(left) != 1 {
		t.Fatalf("segments left while running: %v, want only the open one", left)
	}
	shut(t, l)
	if left := segmentFiles(t, st.AuditJournal()); len(left) != 0 {
		t.Fatalf("segments left after close: %v", left)
	}
	if got, want := names(t, st), wantNames(200); !equal(got, want) {
		t.Fatalf("store has %d records, want 200", len(got))
	}
}

func shut(t *testing.T, l *Log) {
	t.Helper()
	if err := l.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestAJournalThatCannotBeWrittenFallsBackToTheStore(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	l, err := NewJournaledLog(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.j.f.Close() // every write and truncate of this segment fails
	if err := l.Record(record(1)); err != nil {
		t.Fatal(err)
	}
	if got := names(t, st); !equal(got, wantNames(1)) {
		t.Fatalf("store right after the answer: %v, want the record written before it", got)
	}
	if l.j.index != 2 {
		t.Fatalf("segment %d after a failed write, want the next one (2)", l.j.index)
	}
	if err := l.Record(record(2)); err != nil {
		t.Fatal(err)
	}
	shut(t, l)
	if got, want := names(t, st), wantNames(2); !equal(got, want) {
		t.Fatalf("store: %v, want %v", got, want)
	}
}

func FuzzJournalLine(f *testing.F) {
	f.Add(uint64(1), int64(1_700_000_000_000_000_000), "alice", "tok_1", "tool", "echo", "b", "ok", int64(0), int64(1500))
	f.Add(uint64(1<<63), int64(-1), "\"\\\n<>&\u2028", "", "", "", "", "", int64(-32602), int64(-5))
	f.Fuzz(func(t *testing.T, seq uint64, nanos int64, subject, token, kind, name, backend, outcome string, code, dur int64) {
		r := store.AuditRecord{Subject: subject, TokenID: token, Role: "r", Kind: kind, Name: name, Backend: backend,
			Outcome: outcome, Code: code, Duration: time.Duration(dur)}
		if nanos != 0 {
			r.Time = time.Unix(0, nanos).UTC()
		}
		line := appendLine(nil, seq, r)
		if bytes.Count(line, []byte("\n")) != 1 {
			t.Fatalf("line %q is not one line", line)
		}
		gotSeq, got, ok := decodeLine(line)
		if seq == 0 {
			if ok {
				t.Fatal("sequence number 0 read back")
			}
			return
		}
		if !ok || gotSeq != seq {
			t.Fatalf("line %q read back as %d %v", line, gotSeq, ok)
		}
		for _, s := range []*string{&r.Subject, &r.TokenID, &r.Kind, &r.Name, &r.Backend, &r.Outcome} {
			*s = string([]rune(*s)) // each invalid byte becomes U+FFFD, as in JSON
		}
		if !utf8.ValidString(got.Name) || got != r {
			t.Fatalf("read back\n got %+v\nwant %+v", got, r)
		}
		if _, _, ok := decodeLine(line[:len(line)-1]); ok {
			t.Fatal("a line without its newline was read")
		}
	})
}

// discardJournaled keeps nothing and allocates nothing.
type discardJournaled struct{ prefix string }

func (discardJournaled) AppendAudit(context.Context, []store.AuditRecord) error { return nil }
func (d discardJournaled) AuditJournal() string                                 { return d.prefix }
func (discardJournaled) AuditJournalMark(context.Context) (uint64, error)       { return 0, nil }
func (discardJournaled) AppendAuditThrough(context.Context, []store.AuditRecord, uint64) error {
	return nil
}

func TestAJournaledRecordAllocatesNothingOfItsOwn(t *testing.T) {
	if testkit.Race {
		t.Skip("the race detector allocates on its own account, and sync.Pool drops at random under it")
	}
	l, err := NewJournaledLog(context.Background(), discardJournaled{filepath.Join(t.TempDir(), "db-audit")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer shut(t, l)
	r := record(1)
	if n := testing.AllocsPerRun(200, func() { _ = l.Record(r) }); n > 0 {
		t.Fatalf("Record allocates %v times per call, want 0", n)
	}
}

func TestASecondProcessOnTheSameJournalIsRefused(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	l, err := NewJournaledLog(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(record(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := NewJournaledLog(ctx, st, Options{}); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("a second journal on the same database: %v, want it refused", err)
	}
	shut(t, l)
	// Closed, the journal is free again, and the first one's record was
	// not taken from it.
	l, err = NewJournaledLog(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	shut(t, l)
	if got := names(t, st); !equal(got, wantNames(1)) {
		t.Fatalf("store: %v", got)
	}
}
