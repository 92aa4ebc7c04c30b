package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// breakSegment makes the open segment's mapping read-only: the next copy
// into it faults, as it would on a disk failing under the page.
func breakSegment(t *testing.T, j *journal) {
	t.Helper()
	if err := syscall.Mprotect(j.m, syscall.PROT_READ); err != nil {
		t.Fatal(err)
	}
}

// A segment the file system cannot map is written instead: its records
// are journaled all the same, as whole lines with no room after them.
func TestASegmentThatCannotBeMappedIsWritten(t *testing.T) {
	defer func(f func(*os.File, int64) ([]byte, error)) { mapFile = f }(mapFile)
	mapFile = func(*os.File, int64) ([]byte, error) { return nil, syscall.ENODEV }
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	l, err := NewJournaledLog(ctx, storeDown{st}, Options{RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := l.Record(record(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	if l.j.m != nil {
		t.Fatal("the segment is mapped")
	}
	data, err := os.ReadFile(l.j.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	want := appendLine(appendLine(appendLine(nil, 1, record(1)), 2, record(2)), 3, record(3))
	if !bytes.Equal(data, want) {
		t.Fatalf("segment holds %q, want the three lines", data)
	}
	// Cut back, as after a write that failed halfway, the segment takes
	// the next line right after what it kept: no gap of zeros before it.
	two := appendLine(appendLine(nil, 1, record(1)), 2, record(2))
	if err := l.j.f.Truncate(int64(len(two))); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(record(4)); err != nil {
		t.Fatal(err)
	}
	if data, _ = os.ReadFile(l.j.f.Name()); !bytes.Equal(data, appendLine(two, 4, record(4))) {
		t.Fatalf("after a cut the segment holds %q, want lines 1, 2 and then 4", data)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	_ = l.Close(gone)
}
