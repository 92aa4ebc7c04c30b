// journal_test.go holds the journal's rules, on the real SQLite store:
// what a run that ended without writing its records leaves is written at
// the next start, once; a journal whose process still runs is left to
// it; a line cut short is skipped; segments are removed once stored; a
// journal that cannot be written falls back to the store.

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
		Role: "editor", Kind: "tool", Name: fmt.Sprintf("tool_%03d", i), Backend: "b", Outcome: "ok", Code: int64(-i), Duration: time.Duration(i) * time.Microsecond,
		Origin: fmt.Sprintf("own_%d", i), Upstream: "vault:b"}
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

// journalFiles are every journal's files under the store's prefix.
func journalFiles(t *testing.T, st *sqlite.Store) []string {
	t.Helper()
	files, err := filepath.Glob(st.AuditJournal() + ".*")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// storeDown refuses every write: records stay in the journal.
type storeDown struct{ *sqlite.Store }

func (storeDown) AppendAuditThrough(context.Context, []store.AuditRecord, string, uint64) error {
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
	if len(journalFiles(t, st)) == 0 {
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
		if left := journalFiles(t, st); len(left) != 0 {
			t.Fatalf("journal files left after a clean close: %v", left)
		}
	}
	recs, _ := st.TailAudit(ctx, 1)
	if want := record(50); recs[0] != want {
		t.Fatalf("record read back from the journal:\n got %+v\nwant %+v", recs[0], want)
	}
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// writeSegment writes records from..to (sequence numbers) as segment n of
// journal id, with tail appended, and the journal's lock file, free: a
// journal its process left.
func writeSegment(t *testing.T, st *sqlite.Store, id string, n, from, to int, tail string) {
	t.Helper()
	var b []byte
	for i := from; i <= to; i++ {
		b = appendLine(b, uint64(i), record(i))
	}
	prefix := st.AuditJournal() + "." + id
	if err := os.WriteFile(segmentPath(prefix, n), append(b, tail...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prefix+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTheJournalWritesOnlyWhatTheStoreLacks(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	// The store wrote 1..6 (and moved its mark) before the process died,
	// but the segments were not yet removed.
	first := []store.AuditRecord{record(1), record(2), record(3), record(4), record(5), record(6)}
	if err := st.AppendAuditThrough(ctx, first, "left", 6); err != nil {
		t.Fatal(err)
	}
	writeSegment(t, st, "left", 3, 1, 4, "")
	writeSegment(t, st, "left", 4, 5, 10, "")
	l, err := NewJournaledLog(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// New records continue the sequence past what the journal held.
	if err := l.Record(record(11)); err != nil {
		t.Fatal(err)
	}
	shut(t, l)
	if got := names(t, st); !equal(got, append(wantNames(10), record(11).Name)) {
		t.Fatalf("store: %v, want 1..11", got)
	}
	for _, id := range []string{"left", l.j.id} {
		if mark, _ := st.AuditJournalMark(ctx, id); mark != 0 {
			t.Errorf("journal %s's mark %d kept after it was removed", id, mark)
		}
	}
	if left := journalFiles(t, st); len(left) != 0 {
		t.Fatalf("journal files left: %v", left)
	}
}

// A segment's end as a killed process left it: a line cut short, and a
// mapped segment's unwritten room (zeros). Whole lines are written; a cut
// one is skipped and said so; zeros are no line.
func TestAJournalLineCutShortIsSkippedAndSaidSo(t *testing.T) {
	cut := string(appendLine(nil, 4, record(4)))
	room := strings.Repeat("\x00", 4096)
	for _, tc := range []struct {
		name, tail string
		cut        bool
	}{
		{"a written segment, its last line cut short", cut[:len(cut)/2], true},
		{"a mapped segment, its last line cut short", cut[:len(cut)/2] + room, true},
		{"a mapped segment, whole lines then room", room, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, filepath.Join(t.TempDir(), "mcpgate.db"))
			writeSegment(t, st, "cut", 1, 1, 3, tc.tail)
			var logged bytes.Buffer
			l, err := NewJournaledLog(ctx, st, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatal(err)
			}
			shut(t, l)
			if got, want := names(t, st), wantNames(3); !equal(got, want) {
				t.Fatalf("store: %v, want %v", got, want)
			}
			said := strings.Contains(logged.String(), "journal lines unreadable") && strings.Contains(logged.String(), "lines=1")
			if said != tc.cut || tc.cut != strings.Contains(logged.String(), "unreadable") {
				t.Fatalf("log, for a line cut short %v:\n%s", tc.cut, logged.String())
			}
		})
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
	if left := journalFiles(t, st); len(left) != 2 {
		t.Fatalf("journal files while running: %v, want the open segment and the lock", left)
	}
	shut(t, l)
	if left := journalFiles(t, st); len(left) != 0 {
		t.Fatalf("journal files left after close: %v", left)
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
	breakSegment(t, l.j) // every write of this segment fails
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
			Outcome: outcome, Code: code, Duration: time.Duration(dur), Origin: backend + "/" + name, Upstream: "vault:" + backend}
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
		for _, s := range []*string{&r.Subject, &r.TokenID, &r.Kind, &r.Name, &r.Backend, &r.Outcome, &r.Origin, &r.Upstream} {
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

func (discardJournaled) AppendAudit(context.Context, []store.AuditRecord) error   { return nil }
func (d discardJournaled) AuditJournal() string                                   { return d.prefix }
func (discardJournaled) AuditJournalMark(context.Context, string) (uint64, error) { return 0, nil }
func (discardJournaled) ForgetAuditJournal(context.Context, string) error         { return nil }
func (discardJournaled) AppendAuditThrough(context.Context, []store.AuditRecord, string, uint64) error {
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

// Several processes may share one database: each keeps its own journal,
// a start leaves a running one's alone, and takes over one whose process
// ended.
func TestEachLogKeepsItsOwnJournalAndAnEndedOnesIsTakenOver(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	a, err := NewJournaledLog(ctx, storeDown{st}, Options{RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := a.Record(record(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := NewJournaledLog(ctx, st, Options{})
	if err != nil {
		t.Fatalf("a second log on the same database: %v", err)
	}
	if got := names(t, st); len(got) != 0 {
		t.Fatalf("a start took over the journal of a log still running: %v", got)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.Close(gone); err != nil { // a ends with its records in its journal
		t.Fatal(err)
	}
	c, err := NewJournaledLog(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, st); !equal(got, wantNames(5)) {
		t.Fatalf("after a's end, the next start wrote %v, want its 5 records", got)
	}
	shut(t, b)
	shut(t, c)
	if got := names(t, st); !equal(got, wantNames(5)) {
		t.Fatalf("store: %v, want each record once", got)
	}
	if left := journalFiles(t, st); len(left) != 0 {
		t.Fatalf("journal files left: %v", left)
	}
}
