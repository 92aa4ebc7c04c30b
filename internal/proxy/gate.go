// gate.go is the secrets gate (docs/wire.md §3.5): when the image declares
// secrets, no MCP exchange reaches the program before it has been fed
// them — a program asked to work without its credentials would fail, or
// worse, half-work. The first Fed opens the gate for good; later feeds
// change the values, not the gate.

package proxy

import (
	"context"
	"sync"
)

// SecretsGate holds callers until it opens. It is safe for any number of
// concurrent waiters.
type SecretsGate struct {
	open chan struct{}
	once sync.Once
}

// NewGate returns a gate that is closed when required (the image declares
// secrets) and open otherwise.
func NewGate(required bool) *SecretsGate {
	g := &SecretsGate{open: make(chan struct{})}
	if !required {
		g.Open()
	}
	return g
}

// Wait returns nil once the gate is open, or ctx's error if ctx ends first.
func (g *SecretsGate) Wait(ctx context.Context) error {
	select {
	case <-g.open:
		return nil
	default:
	}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Open opens the gate and releases every waiter; it is called after a
// Fed, and calling it again does nothing.
func (g *SecretsGate) Open() { g.once.Do(func() { close(g.open) }) }

// IsOpen reports whether the gate is open.
func (g *SecretsGate) IsOpen() bool {
	select {
	case <-g.open:
		return true
	default:
		return false
	}
}
