// refused_test.go holds what happens to a record the store refuses for
// what it holds (store.ErrRefused), on the real SQLite store with a
// trigger that refuses some names: it is logged and passed over, and
// every other record is written, in every mode and at a journal's
// recovery. Retried, it had held every later record and answer for ever.

package audit

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
)

// refuseNames makes the SQLite database at path refuse every audit
// record whose name is LIKE pattern.
func refuseNames(t *testing.T, path, pattern string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON audit WHEN NEW.name LIKE '` + pattern + `'
		BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
}

func TestARecordTheStoreRefusesIsPassedOverNotRetriedForEver(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		open func(st *sqlite.Store) (*Log, error)
	}{
		{"group commit", func(st *sqlite.Store) (*Log, error) {
			return NewLog(st, Options{Wait: true, RetryDelay: time.Millisecond}), nil
		}},
		{"journal", func(st *sqlite.Store) (*Log, error) {
			return NewJournaledLog(ctx, st, Options{RetryDelay: time.Millisecond})
		}},
		{"queue", func(st *sqlite.Store) (*Log, error) {
			return NewLog(st, Options{FlushEvery: time.Millisecond, RetryDelay: time.Millisecond}), nil
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "mcpgate.db")
			st := openStore(t, db)
			refuseNames(t, db, "refused%")
			l, err := mode.open(st)
			if err != nil {
				t.Fatal(err)
			}
			const callers, each = 8, 25
			var want []string
			refused := 0
			var wg sync.WaitGroup
			for c := range callers {
				recs := make([]store.AuditRecord, each)
				for i := range recs {
					recs[i] = record(c*each + i + 1)
					if i%10 == 3 {
						recs[i].Name, refused = fmt.Sprintf("refused_%d_%d", c, i), refused+1
					} else {
						want = append(want, recs[i].Name)
					}
				}
				wg.Go(func() {
					for _, r := range recs {
						if err := l.Record(r); err != nil {
							t.Errorf("Record %s: %v", r.Name, err)
						}
					}
				})
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Record calls still wait after 10 s: a refused record holds the rest")
			}
			closing, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := l.Close(closing); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if s := l.Stats(); s.Unstorable != uint64(refused) || s.Lost != 0 || s.Queued != 0 {
				t.Errorf("stats %+v: want %d unstorable, none lost or queued", s, refused)
			}
			got := names(t, st)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the store holds %d records, want the %d not refused", len(got), len(want))
			}
			if left := journalFiles(t, st); len(left) != 0 {
				t.Errorf("journal files left after a clean close: %v", left)
			}
		})
	}
}

// A journal its process left holds a record the store now refuses: the
// next start writes the others and passes over that one. It failed to
// start before, with every start after it.
func TestAJournalsRecordTheStoreRefusesDoesNotStopTheNextStart(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "mcpgate.db")
	st := openStore(t, db)
	refuseNames(t, db, record(5).Name)
	writeSegment(t, st, "gone", 1, 1, 10, "")
	for range 2 { // the second start finds nothing more to write
		l, err := NewJournaledLog(ctx, st, Options{})
		if err != nil {
			t.Fatalf("a start after the journal: %v", err)
		}
		shut(t, l)
		if got, want := names(t, st), slices.Delete(wantNames(10), 4, 5); !equal(got, want) {
			t.Fatalf("the store holds %v, want %v", got, want)
		}
		if left := journalFiles(t, st); len(left) != 0 {
			t.Fatalf("journal files left: %v", left)
		}
	}
}
