// journal.go is the group commit's write-ahead journal: a file beside the
// store that a group of records reaches in one write before their answers
// are released.
//
// A write to a file is in the kernel's page cache once the call returns,
// so it survives the process being killed (not the machine losing power:
// the same promise as SQLite's WAL with synchronous=NORMAL, the store's own
// setting). The store then gets the records in the background, in large
// batches, each batch in one transaction that also moves the store's
// journal mark to the batch's last sequence number. At the next start the
// records past the mark are written, and only those: none twice, none lost.
//
// Segments are files PREFIX.N. A segment that reaches segmentBytes is
// closed and the next begun; a closed segment is removed once the store
// holds all of its records, and Close removes the last one when the store
// holds everything.

package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Journaled is a Writer that can keep a journal mark: a store whose
// records may first go to a journal beside it.
type Journaled interface {
	Writer
	// AuditJournal is the path prefix of the journal's segments.
	AuditJournal() string
	// AppendAuditThrough is AppendAudit that also sets the journal mark
	// to seq, in the same transaction.
	AppendAuditThrough(ctx context.Context, records []store.AuditRecord, seq uint64) error
	// AuditJournalMark is the mark AppendAuditThrough last set (0 for
	// none).
	AuditJournalMark(ctx context.Context) (uint64, error)
}

// segmentBytes is the size at which a segment is closed and the next
// begun. A record's line is about 250 bytes.
var segmentBytes int64 = 1 << 20

// journal is the journal's writing end. append is called by one group
// writer at a time; release by the store writer; mu guards what both
// touch.
type journal struct {
	prefix string
	lock   *os.File // held while open (lockJournal)
	f      *os.File
	index  int    // the open segment's number
	size   int64  // the open segment's length
	seq    uint64 // the last sequence number written
	buf    []byte

	mu     sync.Mutex
	closed []segment // oldest first
}

type segment struct {
	path string
	last uint64 // the sequence number of its last record
}

func segmentPath(prefix string, n int) string { return prefix + "." + strconv.Itoa(n) }

// segments lists the segments under prefix in the order written.
func segments(prefix string) ([]string, int, error) {
	matches, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return nil, 0, err
	}
	type numbered struct {
		path string
		n    int
	}
	var found []numbered
	for _, m := range matches {
		n, err := strconv.Atoi(strings.TrimPrefix(m, prefix+"."))
		if err == nil && n > 0 {
			found = append(found, numbered{m, n})
		}
	}
	slices.SortFunc(found, func(a, b numbered) int { return a.n - b.n })
	paths, last := make([]string, len(found)), 0
	for i, f := range found {
		paths[i], last = f.path, f.n
	}
	return paths, last, nil
}

// openJournal writes to w the records the journal under prefix holds past
// w's mark, removes the journal's segments, and begins a new one.
func openJournal(ctx context.Context, w Journaled, prefix string, log *slog.Logger) (*journal, error) {
	lock, err := lockJournal(prefix)
	if err != nil {
		return nil, err
	}
	j, err := recoverJournal(ctx, w, prefix, log)
	if err != nil {
		lock.Close()
		return nil, err
	}
	j.lock = lock
	return j, nil
}

// recoverJournal is openJournal under the journal's lock.
func recoverJournal(ctx context.Context, w Journaled, prefix string, log *slog.Logger) (*journal, error) {
	mark, err := w.AuditJournalMark(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit: journal mark: %w", err)
	}
	paths, last, err := segments(prefix)
	if err != nil {
		return nil, fmt.Errorf("audit: journal: %w", err)
	}
	seq := mark
	var recs []store.AuditRecord
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		if err := w.AppendAuditThrough(ctx, recs, seq); err != nil {
			return fmt.Errorf("audit: write the journal's %d records: %w", len(recs), err)
		}
		recs = recs[:0]
		return nil
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("audit: journal: %w", err)
		}
		torn := 0
		for line := range bytes.Lines(data) {
			n, r, ok := decodeLine(line)
			switch {
			case !ok:
				torn++
			case n > seq:
				recs, seq = append(recs, r), n
				if len(recs) == 256 {
					if err := flush(); err != nil {
						return nil, err
					}
				}
			}
		}
		if torn > 0 {
			log.Warn("audit: journal lines unreadable, skipped (a write cut short)", "segment", p, "lines", torn)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if seq > mark {
		log.Info("audit: records written from the journal", "records", seq-mark)
	}
	for _, p := range paths {
		if err := os.Remove(p); err != nil {
			return nil, fmt.Errorf("audit: journal: %w", err)
		}
	}
	j := &journal{prefix: prefix, seq: seq, index: last}
	if err := j.begin(); err != nil {
		return nil, err
	}
	return j, nil
}

// begin opens the next segment.
func (j *journal) begin() error {
	f, err := os.OpenFile(segmentPath(j.prefix, j.index+1), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	j.f, j.index, j.size = f, j.index+1, 0
	return nil
}

// append writes recs in one write. On failure the segment is cut back to
// where it was (or, failing that, closed), so no partial line stays.
func (j *journal) append(recs []store.AuditRecord) error {
	b := j.buf[:0]
	for i, r := range recs {
		b = appendLine(b, j.seq+uint64(i)+1, r)
	}
	j.buf = b
	if _, err := j.f.Write(b); err != nil {
		if j.f.Truncate(j.size) != nil {
			j.rotate()
		}
		return fmt.Errorf("audit: journal: %w", err)
	}
	j.seq += uint64(len(recs))
	j.size += int64(len(b))
	if j.size >= segmentBytes {
		j.rotate()
	}
	return nil
}

// rotate closes the open segment and begins the next; if the next cannot
// be created the open one is kept.
func (j *journal) rotate() {
	old, path := j.f, j.f.Name()
	if j.begin() != nil {
		return
	}
	old.Close()
	j.mu.Lock()
	j.closed = append(j.closed, segment{path, j.seq})
	j.mu.Unlock()
}

// release removes the closed segments whose records the store holds
// through seq.
func (j *journal) release(seq uint64) {
	j.mu.Lock()
	n := 0
	for n < len(j.closed) && j.closed[n].last <= seq {
		n++
	}
	done := slices.Clone(j.closed[:n])
	j.closed = j.closed[n:]
	j.mu.Unlock()
	for _, s := range done {
		os.Remove(s.path)
	}
}

// close closes the open segment; with all, the store holds every record
// and every segment is removed.
func (j *journal) close(all bool) {
	j.f.Close()
	if all {
		j.release(j.seq)
		os.Remove(j.f.Name())
	}
	j.lock.Close()
}

// line is a record as the journal holds it, one JSON object a line.
type line struct {
	Seq        uint64 `json:"seq"`
	Time       int64  `json:"time"`
	Subject    string `json:"subject"`
	TokenID    string `json:"token_id"`
	Role       string `json:"role"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Backend    string `json:"backend"`
	Outcome    string `json:"outcome"`
	Code       int64  `json:"code"`
	DurationNS int64  `json:"duration_ns"`
}

// appendLine appends r's line, as decodeLine reads it.
func appendLine(b []byte, seq uint64, r store.AuditRecord) []byte {
	var t int64
	if !r.Time.IsZero() {
		t = r.Time.UnixNano()
	}
	b = strconv.AppendUint(append(b, `{"seq":`...), seq, 10)
	b = strconv.AppendInt(append(b, `,"time":`...), t, 10)
	b = jsonrpc.AppendString(append(b, `,"subject":`...), r.Subject)
	b = jsonrpc.AppendString(append(b, `,"token_id":`...), r.TokenID)
	b = jsonrpc.AppendString(append(b, `,"role":`...), r.Role)
	b = jsonrpc.AppendString(append(b, `,"kind":`...), r.Kind)
	b = jsonrpc.AppendString(append(b, `,"name":`...), r.Name)
	b = jsonrpc.AppendString(append(b, `,"backend":`...), r.Backend)
	b = jsonrpc.AppendString(append(b, `,"outcome":`...), r.Outcome)
	b = strconv.AppendInt(append(b, `,"code":`...), r.Code, 10)
	b = strconv.AppendInt(append(b, `,"duration_ns":`...), int64(r.Duration), 10)
	return append(b, "}\n"...)
}

// decodeLine reads one line of appendLine's; false for a line cut short
// or not the journal's.
func decodeLine(b []byte) (uint64, store.AuditRecord, bool) {
	if !bytes.HasSuffix(b, []byte("\n")) {
		return 0, store.AuditRecord{}, false
	}
	var l line
	if json.Unmarshal(b, &l) != nil || l.Seq == 0 {
		return 0, store.AuditRecord{}, false
	}
	r := store.AuditRecord{Subject: l.Subject, TokenID: l.TokenID, Role: l.Role, Kind: l.Kind, Name: l.Name,
		Backend: l.Backend, Outcome: l.Outcome, Code: l.Code, Duration: time.Duration(l.DurationNS)}
	if l.Time != 0 {
		r.Time = time.Unix(0, l.Time).UTC()
	}
	return l.Seq, r, true
}
