// set.go is the Set: the gateway's backends, each running on its own, so
// that adding, removing or losing one leaves the others serving.

package backends

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/mcp"
)

// ErrDuplicateName is returned by Add for a name already in the Set.
var ErrDuplicateName = errors.New("backend: duplicate name")

// ErrSetClosed is returned by Add after Close.
var ErrSetClosed = errors.New("backend: set closed")

// ErrNoSuchBackend is returned by Restart for a name the set does not hold.
var ErrNoSuchBackend = errors.New("backend: no such backend")

// Set runs several backends relaying into one front.
type Set struct {
	front   *mcp.Server
	claims  *catalogue.Claims
	opts    Options
	changed *signal

	mu      sync.Mutex
	ctx     context.Context // nil until Run
	closed  bool
	members map[string]*member
	// stopping counts the members taken out and not yet stopped, so that
	// Close waits for a Remove or another Close still stopping one.
	stopping sync.WaitGroup
	// restarting makes Restarts one at a time: a member is never run twice.
	restarting sync.Mutex
}

// member is one running backend and how to stop it.
type member struct {
	b      *Backend
	cancel context.CancelFunc // nil until started
	done   chan struct{}
}

// NewSet returns an empty Set relaying into front.
func NewSet(front *mcp.Server, opts Options) *Set {
	claims := opts.Claims
	if claims == nil {
		claims = catalogue.NewClaims()
	}
	return &Set{front: front, claims: claims, opts: opts.withDefaults(),
		changed: newSignal(), members: map[string]*member{}}
}

// Changed is closed at the next change of state of any backend.
func (s *Set) Changed() <-chan struct{} { return s.changed.C() }

// Add validates spec and adds its backend; once the Set runs, the backend
// starts at once.
func (s *Set) Add(spec Spec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrSetClosed
	}
	if _, dup := s.members[spec.Name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateName, spec.Name)
	}
	b := New(spec, s.front, s.claims, s.opts)
	b.onChange = s.changed.notify
	m := &member{b: b}
	s.members[spec.Name] = m
	if s.ctx != nil {
		s.start(m)
	}
	s.changed.notify()
	return nil
}

// start runs m until its own context ends. s.mu is held.
func (s *Set) start(m *member) {
	ctx, cancel := context.WithCancel(s.ctx)
	m.cancel, m.done = cancel, make(chan struct{})
	go func() {
		defer close(m.done)
		_ = m.b.Run(ctx)
	}()
}

// Resync asks the named backend, if it is up, to list its catalogue
// again; false for a name not in the set.
func (s *Set) Resync(name string) bool {
	s.mu.Lock()
	m, ok := s.members[name]
	s.mu.Unlock()
	if ok {
		select {
		case m.b.resync <- struct{}{}:
		default:
		}
	}
	return ok
}

// Remove stops the named backend and takes its entries out of the front;
// it reports whether the backend was there.
func (s *Set) Remove(name string) bool {
	s.mu.Lock()
	m, ok := s.members[name]
	delete(s.members, name)
	if ok {
		s.stopping.Add(1)
	}
	s.mu.Unlock()
	if ok {
		m.stop()
		s.stopping.Done()
		s.changed.notify()
	}
	return ok
}

// Restart ends the named backend's connection (its process, for a
// command) and starts it again at once, as an operator's restart button
// does; its entries leave the catalogue and come back when it is up, and
// Restarts counts one more. ErrNoSuchBackend for a name not in the set;
// ErrSetClosed once the set is closed or before it runs.
func (s *Set) Restart(name string) error {
	s.restarting.Lock()
	defer s.restarting.Unlock()
	s.mu.Lock()
	m, ok := s.members[name]
	running := s.ctx != nil && !s.closed
	s.mu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("%w: %q", ErrNoSuchBackend, name)
	case !running:
		return ErrSetClosed
	}
	m.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.members[name] != m {
		return fmt.Errorf("%w: %q", ErrNoSuchBackend, name) // removed meanwhile
	}
	m.b.update(func(st *Status) { st.Restarts++ })
	s.start(m)
	return nil
}

func (m *member) stop() {
	if m.cancel != nil {
		m.cancel()
		<-m.done
	}
}

// Backend returns the named backend, or nil.
func (s *Set) Backend(name string) *Backend {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.members[name]; m != nil {
		return m.b
	}
	return nil
}

// States returns every backend's state, sorted by name.
func (s *Set) States() []Status {
	s.mu.Lock()
	out := make([]Status, 0, len(s.members))
	for _, m := range s.members {
		out = append(out, m.b.State())
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Run starts every backend, and those added later, and returns once ctx
// ends and all of them have stopped.
func (s *Set) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.closed || s.ctx != nil {
		s.mu.Unlock()
		return errors.New("backend: set already running or closed")
	}
	s.ctx = ctx
	for _, m := range s.members {
		s.start(m)
	}
	s.mu.Unlock()
	<-ctx.Done()
	s.Close()
	return nil
}

// Close stops every backend and waits for them, including those a
// concurrent Close or Remove is still stopping; their entries leave the
// front. It may be called more than once, from several goroutines.
func (s *Set) Close() {
	s.mu.Lock()
	s.closed = true
	ms := make([]*member, 0, len(s.members))
	for _, m := range s.members {
		ms = append(ms, m)
	}
	s.members = map[string]*member{}
	s.stopping.Add(len(ms))
	s.mu.Unlock()
	for _, m := range ms {
		m.stop()
		s.stopping.Done()
	}
	s.stopping.Wait()
}

// Arrive tells every backend that is down and gets its credential from
// the person id, by exchange or their own authorization (Backend.Arrive);
// none is waited for.
func (s *Set) Arrive(id mcp.Identity) {
	for _, b := range s.backends() {
		b.Arrive(id)
	}
}
