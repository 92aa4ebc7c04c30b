// Package mcptest holds what tests of several packages need to watch an MCP
// session from outside: a Sink that records what the server sends. The
// test kit itself (waits, leak checks, a buffer safe to log into) is
// package testkit.
package mcptest

import (
	"context"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Recorder is an mcp.Sink that keeps a copy of every message sent to it.
type Recorder struct {
	mu   sync.Mutex
	msgs [][]byte
}

// Send records msg.
func (r *Recorder) Send(_ context.Context, msg []byte) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, append([]byte(nil), msg...))
	r.mu.Unlock()
	return nil
}

// Take returns how many of the recorded messages are notifications of
// method, and forgets them all.
func (r *Recorder) Take(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, msg := range r.msgs {
		if m, err := jsonrpc.Parse(msg); err == nil && m.Method == method {
			n++
		}
	}
	r.msgs = nil
	return n
}
