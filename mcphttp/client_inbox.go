// client_inbox.go is the queue a client Conn's Read takes messages from:
// filled by the goroutines reading HTTP answers and streams, drained in
// order of arrival, and ended with the reason the connection ended.

package mcphttp

import (
	"context"
	"io"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// inbox is the queue Read takes messages from, in order of arrival. It is
// unbounded so that a stream reader never blocks on a slow consumer while
// holding the HTTP exchange that consumer may be waiting for.
type inbox struct {
	mu    sync.Mutex
	queue []*jsonrpc.Message
	err   error         // why the queue ended; nil while open
	ready chan struct{} // a message was pushed
	done  chan struct{} // closed when err is set
}

func newInbox() *inbox {
	return &inbox{ready: make(chan struct{}, 1), done: make(chan struct{})}
}

// push queues msg; after end it is dropped.
func (q *inbox) push(msg *jsonrpc.Message) {
	q.mu.Lock()
	if q.err == nil {
		q.queue = append(q.queue, msg)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *inbox) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop returns the next message, or the reason the queue ended once it is
// empty.
func (q *inbox) pop(ctx context.Context) (*jsonrpc.Message, error) {
	for {
		q.mu.Lock()
		if len(q.queue) > 0 {
			msg := q.queue[0]
			q.queue[0] = nil
			q.queue = q.queue[1:]
			more := len(q.queue) > 0
			q.mu.Unlock()
			if more {
				q.signal() // another reader may be waiting
			}
			return msg, nil
		}
		err := q.err
		q.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-q.ready:
		case <-q.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// end closes the queue with err, once what is queued has been read. The
// first reason wins.
func (q *inbox) end(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = err
		close(q.done)
	}
}

// shut is end for Close: what is still queued is discarded and Read
// returns io.EOF from now on, whatever ended the queue before — Close
// means "no more", not "after these".
func (q *inbox) shut() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = nil
	if q.err == nil {
		close(q.done)
	}
	q.err = io.EOF
}

// ended returns why the queue ended, or nil.
func (q *inbox) ended() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}
