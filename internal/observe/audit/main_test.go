// main_test.go holds what the audit tests share: a leak check (a Log's
// goroutine must be gone after Close), and a fake Writer that keeps every
// batch and can fail or hold writes on demand.

package audit_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// waitLimit bounds every wait on another goroutine. It is a safety net that
// turns a deadlock into a failure, never a way to let time pass.
const waitLimit = 10 * time.Second

var errWrite = errors.New("disk on fire")

// fakeWriter records every batch it accepts.
type fakeWriter struct {
	failFirst int           // fail this many calls before accepting any
	failAll   bool          // fail every call
	hold      chan struct{} // when set, each call waits for a value or its closing

	mu      sync.Mutex
	calls   int
	batches [][]store.AuditRecord
	wrote   chan int      // the size of each accepted batch
	entered chan struct{} // a call has begun
}

func newFakeWriter() *fakeWriter {
	return &fakeWriter{wrote: make(chan int, 1<<16), entered: make(chan struct{}, 1<<16)}
}

func (w *fakeWriter) AppendAudit(ctx context.Context, recs []store.AuditRecord) error {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	if w.hold != nil {
		select {
		case <-w.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	w.mu.Lock()
	w.calls++
	if w.failAll || w.calls <= w.failFirst {
		w.mu.Unlock()
		return errWrite
	}
	w.batches = append(w.batches, slices.Clone(recs))
	w.mu.Unlock()
	select {
	case w.wrote <- len(recs):
	default:
	}
	return nil
}

// records returns every record accepted, in write order.
func (w *fakeWriter) records() []store.AuditRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []store.AuditRecord
	for _, b := range w.batches {
		out = append(out, b...)
	}
	return out
}

func (w *fakeWriter) batchSizes() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for _, b := range w.batches {
		out = append(out, len(b))
	}
	return out
}

// wait receives from ch or fails the test.
func wait[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// closeLog closes l, failing the test on an error.
func closeLog(t testing.TB, l interface{ Close(context.Context) error }) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
