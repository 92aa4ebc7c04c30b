// journal.go is the group commit's write-ahead journal: a file beside the
// store that a group of records reaches in one write before their answers
// are released.
//
// A write to a file is in the kernel's page cache once the call returns,
// so it survives the process being killed (not the machine losing power:
// the same promise as SQLite's WAL with synchronous=NORMAL, the store's own
// setting). The store then gets the records in the background, in large
// batches. Each batch is one transaction that also moves the journal's
// mark in the store to the batch's last sequence number.
//
// On Linux a segment is mapped into memory (MAP_SHARED, its blocks
// allocated up front): a group is copied into the kernel's page cache
// with no system call. A write(2) through ext4 cost 7–10 µs of each call
// at one caller in the harness. Elsewhere segments are written.
//
// Each Log has a journal of its own, named by a random id: several
// processes may share one SQLite database. A journal's lock file is held
// while its Log runs. A start takes over every journal whose lock is
// free (its process is gone): it writes the records past that journal's
// mark, none twice and none lost, then removes the journal.
//
// Segments are files PREFIX.ID.N. A segment that reaches segmentBytes is
// closed and the next begun. A closed segment is removed once the store
// holds all of its records. Close removes the last one when the store
// holds everything.

package audit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
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

// Journaled is a Writer that can keep journal marks: a store whose
// records may first go to journals beside it.
type Journaled interface {
	Writer
	// AuditJournal is the path prefix of the journals' files, "" when
	// the store keeps none (a PostgreSQL store without a journal folder).
	AuditJournal() string
	// AppendAuditThrough is AppendAudit that also sets the mark of
	// journal id to seq, in the same transaction.
	AppendAuditThrough(ctx context.Context, records []store.AuditRecord, id string, seq uint64) error
	// AuditJournalMark is the mark AppendAuditThrough last set for
	// journal id (0 for none).
	AuditJournalMark(ctx context.Context, id string) (uint64, error)
	// ForgetAuditJournal deletes journal id's mark: the journal is gone.
	ForgetAuditJournal(ctx context.Context, id string) error
}

// segmentBytes is the size at which a segment is closed and the next
// begun. A record's line is about 250 bytes.
var segmentBytes int64 = 1 << 20

// journal is the journal's writing end. append is called by one group
// writer at a time; release by the store writer; mu guards what both
// touch.
type journal struct {
	id     string   // the journal's own, random
	prefix string   // of its segments: the store's prefix, "." and id
	lock   *os.File // held while open (lockJournal)
	f      *os.File
	m      []byte // the open segment mapped, or nil where segments are written
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
func segments(prefix string) ([]string, error) {
	matches, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return nil, err
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
	paths := make([]string, len(found))
	for i, f := range found {
		paths[i] = f.path
	}
	return paths, nil
}

// openJournal begins a journal of its own for a Log on w, after taking
// over the journals under w's prefix that no process holds.
func openJournal(ctx context.Context, w Journaled, log *slog.Logger) (*journal, error) {
	base := w.AuditJournal()
	if base == "" {
		return nil, errors.New("audit: the store keeps no journal")
	}
	id := rand.Text()[:12]
	lock, err := lockJournal(base + "." + id + ".lock")
	if err != nil {
		return nil, err
	}
	if err := takeOver(ctx, w, base, id, log); err != nil {
		lock.Close()
		os.Remove(lock.Name())
		return nil, err
	}
	j := &journal{id: id, prefix: base + "." + id, lock: lock}
	if err := j.begin(0); err != nil {
		lock.Close()
		os.Remove(lock.Name())
		return nil, err
	}
	return j, nil
}

// Recover writes to w what the journals of ended processes hold past
// their marks, as a starting Log does: for a reader of the store, such as
// `mcpgate audit tail`, after a gateway was killed. A running process's
// journal is left to it.
func Recover(ctx context.Context, w Journaled, log *slog.Logger) error {
	if w.AuditJournal() == "" {
		return nil
	}
	return takeOver(ctx, w, w.AuditJournal(), "", log)
}

// takeOver recovers every journal under base but own whose lock is free.
func takeOver(ctx context.Context, w Journaled, base, own string, log *slog.Logger) error {
	locks, err := filepath.Glob(base + ".*.lock")
	if err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	for _, path := range locks {
		id := strings.TrimSuffix(strings.TrimPrefix(path, base+"."), ".lock")
		if id == own || strings.Contains(id, ".") {
			continue
		}
		lock, err := lockJournal(path)
		if errors.Is(err, errJournalBusy) {
			continue // its process runs
		}
		if err != nil {
			return err
		}
		err = recoverJournal(ctx, w, base+"."+id, id, log)
		if err == nil {
			err = w.ForgetAuditJournal(ctx, id)
		}
		if err == nil {
			os.Remove(path)
		}
		lock.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// recoverApart writes a journal's records that the store refused together
// (store.ErrRefused) one at a time, each with its sequence number, as the
// Log's writeApart does. A record refused alone is logged and passed over:
// a start that stopped on it would never serve again.
func recoverApart(ctx context.Context, w Journaled, recs []store.AuditRecord, seqs []uint64, id string, log *slog.Logger) error {
	for i := range recs {
		err := w.AppendAuditThrough(ctx, recs[i:i+1], id, seqs[i])
		if errors.Is(err, store.ErrRefused) {
			sayRefused(log, recs[i], err)
			err = w.AppendAuditThrough(ctx, nil, id, seqs[i])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// recoverJournal writes to w the records of journal id (segments under
// prefix) past its mark, then removes its segments.
func recoverJournal(ctx context.Context, w Journaled, prefix, id string, log *slog.Logger) error {
	mark, err := w.AuditJournalMark(ctx, id)
	if err != nil {
		return fmt.Errorf("audit: journal mark: %w", err)
	}
	paths, err := segments(prefix)
	if err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	seq := mark
	var recs []store.AuditRecord
	var seqs []uint64 // each record's
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		err := w.AppendAuditThrough(ctx, recs, id, seq)
		if errors.Is(err, store.ErrRefused) {
			err = recoverApart(ctx, w, recs, seqs, id, log)
		}
		if err != nil {
			return fmt.Errorf("audit: write the journal's %d records: %w", len(recs), err)
		}
		recs, seqs = recs[:0], seqs[:0]
		return nil
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("audit: journal: %w", err)
		}
		// A mapped segment's unwritten end reads as zeros.
		data = bytes.TrimRight(data, "\x00")
		torn := 0
		for line := range bytes.Lines(data) {
			n, r, ok := decodeLine(line)
			switch {
			case !ok:
				torn++
			case n > seq:
				recs, seqs, seq = append(recs, r), append(seqs, n), n
				if len(recs) == 256 {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		if torn > 0 {
			log.Warn("audit: journal lines unreadable, skipped (a write cut short)", "segment", p, "lines", torn)
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if seq > mark {
		log.Info("audit: records written from a journal left by a process that ended", "records", seq-mark, "journal", id)
	}
	for _, p := range paths {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("audit: journal: %w", err)
		}
	}
	return nil
}

// begin opens the next segment, mapped with room for at least need
// bytes where segments are mapped.
func (j *journal) begin(need int) error {
	path := segmentPath(j.prefix, j.index+1)
	flag := os.O_WRONLY | os.O_APPEND
	if mapSegments {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	var m []byte
	if mapSegments {
		if m, err = mapFile(f, max(segmentBytes, int64(need))); err != nil {
			// A file system that cannot map the segment gets it written,
			// opened as where segments are always written: each write
			// appends, even after a failed one was cut back.
			f.Close()
			if f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o600); err != nil {
				os.Remove(path)
				return fmt.Errorf("audit: journal: %w", err)
			}
		}
	}
	j.f, j.m, j.index, j.size = f, m, j.index+1, 0
	return nil
}

// mapFile is mapSegment, replaced by tests.
var mapFile = mapSegment

// append writes recs at once: one copy into the mapped segment, or one
// write. On failure no partial line stays: a written segment is cut back
// to where it was (or, failing that, closed); a mapped one is closed at
// its last whole line.
func (j *journal) append(recs []store.AuditRecord) error {
	b := j.buf[:0]
	for i, r := range recs {
		b = appendLine(b, j.seq+uint64(i)+1, r)
	}
	j.buf = b
	if err := j.put(b); err != nil {
		return fmt.Errorf("audit: journal: %w", err)
	}
	j.seq += uint64(len(recs))
	j.size += int64(len(b))
	if j.size >= segmentBytes {
		j.rotate(0)
	}
	return nil
}

func (j *journal) put(b []byte) error {
	if j.m == nil {
		_, err := j.f.Write(b)
		if err != nil && j.f.Truncate(j.size) != nil {
			j.rotate(0)
		}
		return err
	}
	if j.size+int64(len(b)) > int64(len(j.m)) {
		if !j.rotate(len(b)) {
			return errSegmentFull
		}
	}
	err := copyMapped(j.m[j.size:], b)
	if err != nil {
		j.rotate(0)
	}
	return err
}

// errSegmentFull is put's answer when a group does not fit in the open
// segment and no next one could be begun.
var errSegmentFull = errors.New("the segment is full and no next one could be begun")

// rotate closes the open segment and begins the next, with room for need
// bytes; if the next cannot be created the open one is kept (false).
func (j *journal) rotate(need int) bool {
	old, oldMap, size, path := j.f, j.m, j.size, j.f.Name()
	if j.begin(need) != nil {
		return false
	}
	closeSegment(old, oldMap, size)
	j.mu.Lock()
	j.closed = append(j.closed, segment{path, j.seq})
	j.mu.Unlock()
	return true
}

// closeSegment unmaps a mapped segment and cuts it to the lines it holds,
// then closes it.
func closeSegment(f *os.File, m []byte, size int64) {
	if m != nil {
		unmapSegment(m)
		f.Truncate(size) //nolint:errcheck // recovery reads past zeros anyway
	}
	f.Close()
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

// close closes the open segment. With forget (the store holds every
// record), the journal is removed: its segments, then its mark, then its
// lock; a process that ends between two steps leaves nothing recovered
// twice.
func (j *journal) close(forget func(id string) error) {
	closeSegment(j.f, j.m, j.size)
	j.m = nil
	if forget != nil {
		j.release(j.seq)
		os.Remove(j.f.Name())
		if forget(j.id) == nil {
			os.Remove(j.lock.Name())
		}
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
	Origin     string `json:"origin"`
	Upstream   string `json:"upstream"`
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
	b = jsonrpc.AppendString(append(b, `,"origin":`...), r.Origin)
	b = jsonrpc.AppendString(append(b, `,"upstream":`...), r.Upstream)
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
		Backend: l.Backend, Outcome: l.Outcome, Code: l.Code, Duration: time.Duration(l.DurationNS), Origin: l.Origin, Upstream: l.Upstream}
	if l.Time != 0 {
		r.Time = time.Unix(0, l.Time).UTC()
	}
	return l.Seq, r, true
}
