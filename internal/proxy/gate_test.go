// gate_test.go pins the secrets gate: shut when the image declares
// secrets, until the first Fed opens it for every waiter at once; open from
// the start otherwise; a waiter whose caller leaves stops waiting.

package proxy

import (
	"context"
	"errors"
	"testing"
)

func TestTheGateHoldsEveryWaiterUntilOpen(t *testing.T) {
	ctx := testCtx(t)
	g := NewGate(true)
	if g.IsOpen() {
		t.Fatal("a required gate starts open")
	}
	const waiters = 20
	released := make(chan error, waiters)
	for range waiters {
		go func() { released <- g.Wait(ctx) }()
	}
	select {
	case err := <-released:
		t.Fatalf("a waiter passed a shut gate: %v", err)
	default:
	}
	g.Open()
	g.Open() // a second feed changes nothing
	for range waiters {
		if err := <-released; err != nil {
			t.Errorf("waiter: %v", err)
		}
	}
	if !g.IsOpen() || g.Wait(ctx) != nil {
		t.Error("the gate did not stay open")
	}
}

func TestAGateWithoutSecretsIsOpen(t *testing.T) {
	g := NewGate(false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // not even a dead context waits
	if err := g.Wait(ctx); err != nil || !g.IsOpen() {
		t.Errorf("Wait = %v, IsOpen = %v", err, g.IsOpen())
	}
}

func TestWaitHonoursItsContext(t *testing.T) {
	g := NewGate(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Wait(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Wait = %v, want context.Canceled", err)
	}
}
