// inbox.go is the queue between a proxy connection's goroutines (each
// exchange, the notification stream, the local answers) and the one reader
// of the mcp.Conn. It is unbounded, so that no answer ever waits for the
// reader. It ends once the connection does, after what it holds is read.

package wiremcp

import (
	"context"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// inbox is the unbounded queue of messages for Read: an exchange's answer
// never waits for the reader.
type inbox struct {
	mu    sync.Mutex
	queue []*jsonrpc.Message
	done  bool
	wake  chan struct{} // closed and replaced at each push and at end
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{})} }

func (q *inbox) push(msg *jsonrpc.Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.done {
		return
	}
	q.queue = append(q.queue, msg)
	close(q.wake)
	q.wake = make(chan struct{})
}

func (q *inbox) end() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.done {
		q.done = true
		close(q.wake)
	}
}

// pop returns the next message, or ok false once the inbox has ended and
// is empty.
func (q *inbox) pop(ctx context.Context) (msg *jsonrpc.Message, ok bool, err error) {
	for {
		q.mu.Lock()
		if len(q.queue) > 0 {
			msg = q.queue[0]
			q.queue[0] = nil
			q.queue = q.queue[1:]
			q.mu.Unlock()
			return msg, true, nil
		}
		if q.done {
			q.mu.Unlock()
			return nil, false, nil
		}
		wake := q.wake
		q.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}
