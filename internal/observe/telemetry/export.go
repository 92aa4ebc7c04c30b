// export.go reports the exporter's failures in the gateway's own log: once
// when exports start failing and once when they recover, not once a batch,
// with the collector's header values cut out. Spans that could not be
// sent are counted and dropped: a collector that is down must not hold
// the gateway up or fill its memory.

package telemetry

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ExportStats counts the spans handed to the exporter.
type ExportStats struct {
	Exported uint64 // spans the collector accepted
	Failed   uint64 // spans dropped because an export failed
}

type loggedExporter struct {
	sdktrace.SpanExporter
	log     *slog.Logger
	secrets []string

	exported, failed atomic.Uint64
	mu               sync.Mutex
	failing          bool
}

// minSecretLen is the shortest value scrubbed: shorter ones are no
// secret, and cutting them out would garble every message.
const minSecretLen = 4

func newLoggedExporter(e sdktrace.SpanExporter, log *slog.Logger, headerValues []string) *loggedExporter {
	l := &loggedExporter{SpanExporter: e, log: log}
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecretLen {
			l.secrets = append(l.secrets, v)
		}
	}
	for _, v := range headerValues {
		add(v)
		// "Bearer TOKEN": the token alone may be quoted too.
		if _, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			add(tok)
		}
	}
	// Longest first, so that a secret containing another is cut whole.
	sort.Slice(l.secrets, func(i, j int) bool { return len(l.secrets[i]) > len(l.secrets[j]) })
	return l
}

// ExportSpans exports and reports; it never returns the error, which the
// SDK would otherwise hand to the otel package's process-wide handler (an
// unstructured line on stderr per failed batch).
func (l *loggedExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := l.SpanExporter.ExportSpans(ctx, spans)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.failed.Add(uint64(len(spans)))
		if !l.failing {
			l.failing = true
			l.log.Warn("tracing: exporting spans failed; they are dropped until the collector answers",
				"err", l.scrub(err.Error()), "spans", len(spans))
		}
		return nil
	}
	l.exported.Add(uint64(len(spans)))
	if l.failing {
		l.failing = false
		l.log.Info("tracing: exporting spans again", "dropped", l.failed.Load())
	}
	return nil
}

// scrub cuts every header value out of s.
func (l *loggedExporter) scrub(s string) string {
	for _, v := range l.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// Stats returns the exporter's counts (zero when tracing is off).
func (t *Tracer) Stats() ExportStats {
	if !t.Enabled() {
		return ExportStats{}
	}
	return ExportStats{Exported: t.exporter.exported.Load(), Failed: t.exporter.failed.Load()}
}
