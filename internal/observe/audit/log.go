// Package audit records one line per gated call — who called which tool,
// resource or prompt, how it ended and how long it took — and never the
// arguments.
//
// Two halves. Observer watches the MCP engine and turns each tools/call,
// resources/read and prompts/get into a store.AuditRecord. A Log writes
// those records to the store, one write at a time, in one of two modes.
//
// With Options.Wait (the gateway's default), Record returns only once its
// record is written: a group commit. The first caller to find no write in
// progress writes, in its own goroutine, every record waiting at that
// moment in one transaction, then releases their callers. Records that
// arrive meanwhile wait, and the first of them writes the next group. A
// lone record is so written at once, with no hand-off to another
// goroutine. The engine calls the observer before it answers, so an
// answered call is an audited call, even when the process is killed a
// moment later.
//
// NewJournaledLog's group commit writes each group to a journal file
// beside the store in one write, not to the store in one transaction
// (journal.go). A killed process keeps the journal, and the next start
// writes what the store lacks. The store then gets the records in
// batches, as without Wait.
//
// Without Wait, Record puts the record on a buffered queue and returns.
// The writer writes batches when BatchSize have gathered, or FlushEvery
// after the first of a batch arrived. A process killed abruptly loses what
// was queued.
//
// In both modes a failed write is retried with growing pauses until it
// succeeds, and nothing is dropped. One exception: a record the store
// refuses for what it holds (store.ErrRefused) is written apart from the
// rest, then logged, counted (Stats.Unstorable) and passed over.
// Retried, it would hold every later record for ever. With Wait, calls
// wait while the store is slow or down. Without it, the queue may fill when the store is slow
// or down for longer than the buffer covers. Record then waits for room
// rather than throw a record away. An audit log with silent holes is worse
// than calls that slow down while it cannot keep up. Stats shows when it
// happens (Queued, MaxQueued; Blocked without Wait). Close writes
// everything queued before it returns; only when its context ends first
// does it give up, and it says how many records were lost.
package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/textcut"
	"github.com/mcpgate/mcpgate/internal/tick"
)

// ErrClosed is returned by Record once Close has begun.
var ErrClosed = errors.New("audit: log closed")

// Writer is where records go; store.Store is one.
type Writer interface {
	// AppendAudit writes records, all or none. It must not keep the
	// slice, and must return when ctx ends.
	AppendAudit(ctx context.Context, records []store.AuditRecord) error
}

// Options tunes a Log. The zero value is usable.
type Options struct {
	// Wait makes Record return only once its record is written (see the
	// package comment).
	Wait       bool
	BatchSize  int           // records per write at most (default 256)
	FlushEvery time.Duration // without Wait: longest a record waits for its batch to fill (default 200ms)
	Buffer     int           // records queued before Record waits (default 8192)
	// RetryDelay is the pause after the first failed write (default
	// 100ms); it doubles with every further failure up to MaxRetryDelay
	// (default 5s).
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration
	Logger        *slog.Logger // default: discard
}

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = 256
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = 200 * time.Millisecond
	}
	if o.Buffer <= 0 {
		o.Buffer = 8192
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 100 * time.Millisecond
	}
	if o.MaxRetryDelay < o.RetryDelay {
		o.MaxRetryDelay = max(5*time.Second, o.RetryDelay)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Log batches records to a Writer. It is safe for concurrent use.
type Log struct {
	w     Writer
	opts  Options
	log   *slog.Logger
	queue chan store.AuditRecord // without Wait, or to the store behind a journal
	// full tells the writer that a batch's worth is queued (queued): it
	// does not wait on the queue while a batch gathers (run).
	full chan struct{}

	// closed is set once, under mu, by Close. A Record that saw it unset
	// is counted in senders before mu is released, so Close knows when
	// the last record that made it in has reached the queue.
	mu          sync.RWMutex
	closed      bool
	senders     sync.WaitGroup
	closeOnce   sync.Once
	sendersDone chan struct{}

	giveUpOnce   sync.Once
	giveUp       chan struct{} // Close's context ended: stop retrying
	giveUpErr    error
	writeCtx     context.Context
	cancelWrites context.CancelFunc
	done         chan struct{} // the writer goroutine has returned

	group group // Options.Wait's group commit
	// j is the group commit's journal (NewJournaledLog), nil without
	// one (its Writer is then a Journaled, which keeps the mark); stored
	// is the last sequence number the store writer has written.
	j      *journal
	stored uint64

	counters
}

// group is the group commit's state: the records waiting with where to
// tell their callers, and whether a caller is writing. One caller writes
// at a time.
type group struct {
	mu      sync.Mutex
	recs    []store.AuditRecord
	dones   []chan outcome
	writing bool
	last    int // the size of the last group written, set by its writer
	// The slices of the group being written, kept for the next one.
	spareRecs  []store.AuditRecord
	spareDones []chan outcome
}

// NewLog starts a Log writing to w. Close stops it.
func NewLog(w Writer, opts Options) *Log {
	return start(w, opts.withDefaults(), nil)
}

// NewJournaledLog is NewLog with Options.Wait whose group commit writes to
// a journal of its own beside w, not to w itself (journal.go). First it
// writes to w what the journals of processes that ended hold past their
// marks. Answers are released as soon as their records are in the
// journal; the store gets them in the background, in batches.
func NewJournaledLog(ctx context.Context, w Journaled, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	opts.Wait = true
	j, err := openJournal(ctx, w, opts.Logger)
	if err != nil {
		return nil, err
	}
	return start(w, opts, j), nil
}

func start(w Writer, opts Options, j *journal) *Log {
	l := &Log{
		w:           w,
		opts:        opts,
		log:         opts.Logger,
		sendersDone: make(chan struct{}),
		giveUp:      make(chan struct{}),
		done:        make(chan struct{}),
	}
	if j != nil {
		l.j, l.stored = j, j.seq
	}
	if !opts.Wait || j != nil {
		l.queue = make(chan store.AuditRecord, opts.Buffer)
		l.full = make(chan struct{}, 1)
	}
	l.writeCtx, l.cancelWrites = context.WithCancel(context.Background())
	go l.run()
	return l
}

// outcome is what a waiting caller is told.
type outcome uint8

const (
	written outcome = iota + 1
	lost
	lead // write the records waiting now, yours among them
)

// yield is runtime.Gosched, counted by tests.
var yield = runtime.Gosched

// dones are the channels waiting callers are told on, reused: a call
// allocates none.
var dones = sync.Pool{New: func() any { return make(chan outcome, 1) }}

// Record queues r to be written. Without Options.Wait it returns at once
// unless the queue is full, and then waits for room; with it, it returns
// once r is written (see the package comment). After Close has begun it
// writes nothing, logs the refusal and returns ErrClosed.
func (l *Log) Record(r store.AuditRecord) error {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return l.refuse(r)
	}
	l.senders.Add(1)
	l.mu.RUnlock()

	defer l.senders.Done()
	if l.opts.Wait {
		return l.commit(r)
	}
	return l.enqueue(r)
}

// commit is Record with Options.Wait: r joins the records waiting, and
// its caller writes them when no one else is writing (see the package
// comment).
func (l *Log) commit(r store.AuditRecord) error {
	done := dones.Get().(chan outcome)
	l.enqueuing()
	l.recorded.Add(1)
	g := &l.group
	g.mu.Lock()
	g.recs, g.dones = append(g.recs, r), append(g.dones, done)
	res := lead
	if g.writing {
		g.mu.Unlock()
		res = <-done
	} else {
		g.writing = true
		g.mu.Unlock()
	}
	for res == lead {
		l.writeGroup()
		res = <-done // told by its own write
	}
	dones.Put(done)
	if res == lost {
		return ErrLost
	}
	return nil
}

// writeGroup writes every record waiting, tells their callers, then hands
// the writing to the first record that arrived meanwhile, or ends it.
func (l *Log) writeGroup() {
	g := &l.group
	// Yielding once first lets the calls about to record join the group,
	// when calls come together: the last group held more than one. A lone
	// caller does not yield, since an idle process's yield wakes a thread
	// to run nothing (the futex wake-ups of c=1 in the harness's profile).
	if g.last > 1 {
		yield()
	}
	g.mu.Lock()
	recs, done := g.recs, g.dones
	g.recs, g.dones = g.spareRecs[:0], g.spareDones[:0]
	g.mu.Unlock()
	res := lost
	journaled := false
	if l.j != nil {
		err := l.j.append(recs)
		if journaled = err == nil; !journaled {
			l.log.Error("audit: journal write failed, writing to the store instead", "records", len(recs), "err", err)
		}
	}
	if journaled || l.write(recs, false) {
		res = written
	}
	g.last = len(recs)
	for _, d := range done {
		d <- res
	}
	if journaled {
		l.toStore(recs)
	}
	clear(recs) // the records' strings are not kept alive
	clear(done)
	g.mu.Lock()
	g.spareRecs, g.spareDones = recs[:0], done[:0]
	if len(g.dones) > 0 {
		g.dones[0] <- lead
	} else {
		g.writing = false
	}
	g.mu.Unlock()
}

// toStore queues journaled records for the store writer, in the order
// journaled: every journaled record enters the queue once, so the writer
// knows each batch's last sequence number by counting.
func (l *Log) toStore(recs []store.AuditRecord) {
	for _, r := range recs {
		select {
		case l.queue <- r:
			l.queued()
		case <-l.giveUp:
			// Close gave up: what is left stays in the journal.
			l.pending.Add(-1)
		}
	}
}

// ErrLost is returned by a waiting Record whose record Close gave up on.
var ErrLost = errors.New("audit: record lost: close gave up before it was written")

func (l *Log) enqueue(r store.AuditRecord) error {
	l.enqueuing()
	select {
	case l.queue <- r:
		l.recorded.Add(1)
		l.queued()
		return nil
	default:
	}
	l.blocked.Add(1)
	l.queued()
	select {
	case l.queue <- r:
		l.recorded.Add(1)
		l.queued()
		return nil
	case <-l.giveUp:
		l.pending.Add(-1)
		return l.refuse(r)
	}
}

func (l *Log) refuse(r store.AuditRecord) error {
	l.refused.Add(1)
	l.log.Warn("audit: record refused, the log is closed",
		"kind", r.Kind, "name", r.Name, "subject", r.Subject, "outcome", r.Outcome)
	return ErrClosed
}

// Close writes every record queued and stops the writer. If ctx ends
// first, Close stops retrying, cancels the write in progress and returns
// an error counting the records lost.
func (l *Log) Close(ctx context.Context) error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		go func() {
			l.senders.Wait()
			close(l.sendersDone)
		}()
	})
	select {
	case <-l.done:
	case <-ctx.Done():
		l.giveUpOnce.Do(func() {
			l.giveUpErr = ctx.Err()
			close(l.giveUp)
			l.cancelWrites()
		})
		<-l.done
	}
	// Once the writer gave up, records may be left in the queue, and
	// waiting senders are leaving it: count what they left.
	<-l.sendersDone
	left := 0
	for drained := false; !drained; {
		select {
		case <-l.queue:
			left++
		default:
			drained = true
		}
	}
	if left > 0 {
		l.lose(left, "close gave up before they were written", l.j != nil)
	}
	l.cancelWrites()
	if l.j != nil {
		// No one writes any more: the store holds all, or the journal
		// keeps the rest for the next start.
		var forget func(string) error
		if l.stored == l.j.seq {
			forget = func(id string) error { return l.w.(Journaled).ForgetAuditJournal(ctx, id) }
		}
		l.j.close(forget)
	}
	if lost := l.lost.Load(); lost > 0 {
		return fmt.Errorf("audit: close gave up with %d records unwritten: %w", lost, l.giveUpErr)
	}
	return nil
}

// queued tells the writer, after a record joined the queue, when a
// batch's worth waits: it may have missed the moment, so it is told
// again. The writer's own first record is not in the queue.
func (l *Log) queued() {
	if len(l.queue) >= l.fullAt()-1 {
		select {
		case l.full <- struct{}{}:
		default:
		}
	}
}

// fullAt is how many records waiting make the writer write: a batch, or
// all a queue smaller than a batch holds with the writer's first.
func (l *Log) fullAt() int { return min(l.opts.BatchSize, l.opts.Buffer+1) }

// run is the writer goroutine: it gathers batches and writes them. Only
// a batch's first record wakes it. Then it waits for FlushEvery, or for
// word that BatchSize are queued, while the rest join the queue without
// waking it. A wake per record had cost a thread's wake-up per call when
// calls came one at a time.
func (l *Log) run() {
	defer close(l.done)
	batch := make([]store.AuditRecord, 0, l.opts.BatchSize)
	flush := time.NewTimer(l.opts.FlushEvery)
	flush.Stop()
	defer flush.Stop()
	for {
		select {
		case r := <-l.queue:
			batch = append(batch, r)
			l.woken.Add(1)
		case <-l.sendersDone:
			l.drain(batch)
			return
		}
		flush.Reset(l.opts.FlushEvery)
	gather:
		for len(batch)+len(l.queue) < l.fullAt() {
			select {
			case <-l.full:
				l.woken.Add(1)
			case <-flush.C:
				break gather
			case <-l.sendersDone:
				flush.Stop()
				l.drain(batch)
				return
			}
		}
		flush.Stop()
		if !l.write(l.take(batch), true) {
			return
		}
		batch = batch[:0]
	}
}

// take adds to batch the records already queued, up to BatchSize.
func (l *Log) take(batch []store.AuditRecord) []store.AuditRecord {
	for len(batch) < l.opts.BatchSize {
		select {
		case r := <-l.queue:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// drain writes the batch and whatever is left in the queue: Close has
// begun and no record will be added.
func (l *Log) drain(batch []store.AuditRecord) {
	for {
		batch = l.take(batch)
		if len(batch) == 0 || !l.write(batch, true) {
			return
		}
		batch = batch[:0]
	}
}

// write writes batch, retrying until it is written (true) or Close gives
// up (false, and the batch is counted lost). queued says batch is the
// queue's: with a journal, its records are journaled.
func (l *Log) write(batch []store.AuditRecord, queued bool) bool {
	if len(batch) == 0 {
		return true
	}
	delay := l.opts.RetryDelay
	for attempt := 1; ; attempt++ {
		err := l.append(batch, len(batch), queued)
		if err == nil {
			l.wrote(len(batch))
			if attempt > 1 {
				l.log.Info("audit: write succeeded after retrying", "records", len(batch), "attempts", attempt)
			}
			return true
		}
		l.writeErrors.Add(1)
		if errors.Is(err, store.ErrRefused) {
			return l.writeApart(batch, queued, err)
		}
		l.log.Warn("audit: write failed, retrying", "records", len(batch), "attempt", attempt, "retry_in", delay, "err", err)
		if !l.pause(delay) {
			l.lose(len(batch), "writes kept failing until close gave up", queued && l.j != nil)
			return false
		}
		delay = min(2*delay, l.opts.MaxRetryDelay)
	}
}

// pause waits delay before a write is tried again; false when Close gave
// up meanwhile.
func (l *Log) pause(delay time.Duration) bool { return tick.Sleep(delay, l.giveUp) }

// writeApart writes a batch the store refused (store.ErrRefused) one
// record at a time, so that only what it refuses is missing. A record it
// refuses alone is logged and counted (Stats.Unstorable). Retried, it
// would hold every record after it, and with Wait every answer, for ever.
func (l *Log) writeApart(batch []store.AuditRecord, queued bool, err error) bool {
	if len(batch) > 1 {
		for i := range batch {
			if !l.write(batch[i:i+1], queued) {
				l.lose(len(batch)-i-1, "writes kept failing until close gave up", queued && l.j != nil)
				return false
			}
		}
		return true
	}
	sayRefused(l.log, batch[0], err)
	if queued && l.j != nil {
		// The journal's mark moves past it, or the next start would
		// write it again.
		for delay := l.opts.RetryDelay; l.append(nil, 1, queued) != nil; delay = min(2*delay, l.opts.MaxRetryDelay) {
			if !l.pause(delay) {
				l.lose(1, "close gave up before the journal's mark passed a refused record", true)
				return false
			}
		}
	}
	l.unstorable.Add(1)
	l.pending.Add(-1)
	return true
}

// sayRefused logs record r, which the store refused for what it holds:
// what was called and how it ended, with the store's reason.
func sayRefused(log *slog.Logger, r store.AuditRecord, err error) {
	log.Error("audit: the store refused a record; it is lost", "kind", r.Kind, "name", textcut.Valid(r.Name, 128),
		"backend", r.Backend, "outcome", r.Outcome, "err", err)
}

// append writes batch to the store: with a journal, a batch the store
// writer took from the queue moves the store's mark past the next n
// journaled records (batch's own, or a refused one's with none).
func (l *Log) append(batch []store.AuditRecord, n int, queued bool) error {
	if l.j == nil || !queued {
		return l.w.AppendAudit(l.writeCtx, batch)
	}
	through := l.stored + uint64(n)
	if err := l.w.(Journaled).AppendAuditThrough(l.writeCtx, batch, l.j.id, through); err != nil {
		return err
	}
	l.stored = through
	l.j.release(through)
	return nil
}

// lose counts n records not written; journaled ones are not lost: the
// next start writes them.
func (l *Log) lose(n int, why string, journaled bool) {
	if journaled {
		l.pending.Add(-int64(n))
		l.log.Warn("audit: records left in the journal for the next start", "records", n, "why", why)
		return
	}
	l.lost.Add(uint64(n))
	l.pending.Add(-int64(n))
	l.log.Error("audit: records lost", "records", n, "why", why)
}
