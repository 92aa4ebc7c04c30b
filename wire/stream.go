// stream.go is the queue behind every Next (Scope, Channel, Subscription):
// the reader goroutine pushes each response as it arrives and never waits
// for the consumer, so one slow reader of one exchange never holds up the
// frames of another. The queue is unbounded for that reason; the wire has
// no flow control of its own. A byte stream (a pair's channel) may bound
// its queue instead (limit). Beyond the bound the reader goroutine waits,
// outside every lock, until the consumer has caught up. The peer's writes
// then wait on TCP, which is the back-pressure. It costs the connection's
// other exchanges their turn while it waits.

package wire

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
)

type stream struct {
	mu    sync.Mutex
	queue [][]byte
	head  int
	got   bool          // a response arrived: a finish is io.EOF, not bare
	end   error         // set once: io.EOF, ErrBareFinish, or why it ended
	wake  chan struct{} // closed on push or end; made only when someone waits

	lends atomic.Bool // its consumer reads with Channel.CopyNext

	limit   int           // bytes that may wait unread (0: no bound)
	size    int           // bytes the waiting responses hold: their capacity
	drained chan struct{} // closed when size falls to limit, or at the end
}

func newStream() *stream { return &stream{} }

// push queues one response; after the end it is dropped. It reports
// whether the queue is now over its bound (the reader should waitDrained).
func (s *stream) push(p []byte) (over bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.end != nil {
		return false
	}
	s.got = true
	s.queue = append(s.queue, p)
	s.size += cap(p)
	s.signal()
	return s.limit > 0 && s.size > s.limit
}

// setLimit bounds the bytes that may wait unread.
func (s *stream) setLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = n
}

// waitDrained waits until the queue is back within its bound, the stream
// has ended, or done is closed.
func (s *stream) waitDrained(done <-chan struct{}) {
	for {
		s.mu.Lock()
		if s.end != nil || s.limit == 0 || s.size <= s.limit {
			s.mu.Unlock()
			return
		}
		if s.drained == nil {
			s.drained = make(chan struct{})
		}
		drained := s.drained
		s.mu.Unlock()
		select {
		case <-drained:
		case <-done:
			return
		}
	}
}

func (s *stream) signalDrained() {
	if s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
}

// finish ends the stream after what is queued: io.EOF, or ErrBareFinish
// when nothing came before it.
func (s *stream) finish() {
	if s.got {
		s.fail(io.EOF)
	} else {
		s.fail(ErrBareFinish)
	}
}

// fail ends the stream with err after what is queued. The first end wins.
func (s *stream) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.end == nil {
		s.end = err
		s.signal()
		s.signalDrained()
	}
}

func (s *stream) signal() {
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
}

// next returns the next response, or the end once the queue is drained.
// ctx bounds only this wait; the exchange goes on.
func (s *stream) next(ctx context.Context) ([]byte, error) {
	for {
		s.mu.Lock()
		if s.head < len(s.queue) {
			p := s.queue[s.head]
			s.queue[s.head] = nil
			s.head++
			s.size -= cap(p)
			if s.size <= s.limit {
				s.signalDrained()
			}
			if s.head == len(s.queue) {
				s.queue, s.head = s.queue[:0], 0
			}
			s.mu.Unlock()
			return p, nil
		}
		if s.end != nil {
			s.mu.Unlock()
			return nil, s.end
		}
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
