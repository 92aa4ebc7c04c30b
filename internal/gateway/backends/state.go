// state.go is what a backend reports about itself: up or down, since when,
// how often it restarted and why it last failed — with secrets scrubbed,
// since /readyz shows it to anyone.

package backends

import (
	"sync"
	"time"
)

// Status is a backend's state.
type Status struct {
	Name     string
	Kind     string
	Up       bool
	Since    time.Time // when Up last changed (or the backend was created)
	Restarts int       // connections attempted after the first
	// Connecting: an attempt to connect is under way (not yet up, not yet
	// failed); false while the backend waits out its backoff.
	Connecting bool
	// LastError is why the backend last went down or failed to come up,
	// without any configured header or env value.
	LastError string
}

// signal is a broadcast: every waiter on C is woken by the next notify.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

// C is closed at the next notify.
func (s *signal) C() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

func (s *signal) notify() {
	s.mu.Lock()
	close(s.ch)
	s.ch = make(chan struct{})
	s.mu.Unlock()
}
