// logrecorder_test.go captures log records so that a test can wait for
// one to arrive (a child's stderr line) instead of sleeping for it.

package stdio

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
	changed chan struct{} // closed and replaced on every record
}

func newLogRecorder() *logRecorder { return &logRecorder{changed: make(chan struct{})} }

func (r *logRecorder) logger() *slog.Logger { return slog.New(r) }

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	return withAttrs{r, as}
}

// withAttrs records what its logger was given With alongside each record,
// as a real handler writes it.
type withAttrs struct {
	r     *logRecorder
	attrs []slog.Attr
}

func (w withAttrs) Enabled(ctx context.Context, l slog.Level) bool { return w.r.Enabled(ctx, l) }
func (w withAttrs) WithGroup(string) slog.Handler                  { return w }
func (w withAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return withAttrs{w.r, append(append([]slog.Attr(nil), w.attrs...), as...)}
}
func (w withAttrs) Handle(ctx context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(w.attrs...)
	return w.r.Handle(ctx, rec)
}
func (r *logRecorder) WithGroup(string) slog.Handler { return r }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Clone())
	close(r.changed)
	r.changed = make(chan struct{})
	return nil
}

// find returns the first record matching, if any.
func (r *logRecorder) find(match func(slog.Record, map[string]string) bool) (map[string]string, bool, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		attrs := map[string]string{"msg": rec.Message}
		rec.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			return true
		})
		if match(rec, attrs) {
			return attrs, true, nil
		}
	}
	return nil, false, r.changed
}

// waitFor returns the attributes (and "msg") of the first record matching.
func (r *logRecorder) waitFor(t *testing.T, what string, match func(slog.Record, map[string]string) bool) map[string]string {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		attrs, ok, changed := r.find(match)
		if ok {
			return attrs
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no log record: %s", what)
		}
	}
}

// stderrLine matches the record of a child's stderr line with a prefix.
func stderrLine(prefix string) func(slog.Record, map[string]string) bool {
	return func(rec slog.Record, attrs map[string]string) bool {
		return rec.Message == "stderr" && len(attrs["line"]) >= len(prefix) && attrs["line"][:len(prefix)] == prefix
	}
}
