package catalogue

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
)

// A quiet call is aborted by its registry's sweep, never before its
// deadline; a kick moves the deadline; a paused or stopped watchdog never
// fires; and once no watchdog is armed the sweep stops running.
func TestTheSweepFiresAWatchdogOnlyPastItsDeadline(t *testing.T) {
	const d = 40 * time.Millisecond
	in := NewInflight()
	in.log = slog.New(slog.DiscardHandler)
	type firing struct {
		after time.Duration
		err   error
	}
	fired := make(chan firing, 4)
	begin := func() (*inflightCall, time.Time) {
		start := time.Now()
		_, c := in.beginWith(context.Background(), &mcp.Request{}, json.RawMessage(`{}`), d,
			func(err error) { fired <- firing{time.Since(start), err} }, nil)
		return c, start
	}

	quiet, _ := begin()
	f := <-fired
	if f.after < d || !errors.Is(f.err, errCallTimeout) {
		t.Fatalf("a quiet call was aborted after %v with %v, want at %v or later with the timeout", f.after, f.err, d)
	}
	in.end(quiet)

	kicked, start := begin()
	time.Sleep(d / 2) // half the quiet time passes, then the backend shows progress
	kicked.watchdog.kick()
	kickedAt := time.Since(start)
	f = <-fired
	if f.after < kickedAt+d {
		t.Errorf("a call kicked at %v was aborted at %v, before %v", kickedAt, f.after, kickedAt+d)
	}
	in.end(kicked)

	// Armed and paused (or stopped) under the registry's lock, so that no
	// sweep comes between.
	start = time.Now()
	abort := func(err error) { fired <- firing{time.Since(start), err} }
	paused, stopped := &inflightCall{seq: 101}, &inflightCall{seq: 102}
	in.mu.Lock()
	for _, c := range []*inflightCall{paused, stopped} {
		in.calls[c.seq] = c
		c.watchdog.start(in, abort, nil, d)
	}
	paused.watchdog.pause()
	stopped.watchdog.stop()
	in.mu.Unlock()
	testkit.WaitFor(t, "the sweep to stop with nothing armed", func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		return !in.sweeping
	})
	select {
	case f := <-fired:
		t.Fatalf("a paused or stopped watchdog fired (after %v)", f.after)
	default:
	}
	paused.watchdog.resume()
	if f := <-fired; f.after < d {
		t.Errorf("a resumed call was aborted after %v in all, before its %v", f.after, d)
	}
	in.mu.Lock()
	delete(in.calls, paused.seq)
	delete(in.calls, stopped.seq)
	in.mu.Unlock()
}

// Starting a call's watchdog allocates nothing: no timer per call.
func TestAWatchdogAllocatesNothing(t *testing.T) {
	in := NewInflight()
	c := &inflightCall{}
	in.calls[1] = c
	abort := func(error) {}
	in.mu.Lock()
	c.watchdog.start(in, abort, nil, time.Hour) // the sweep's timer made once
	in.mu.Unlock()
	if n := testing.AllocsPerRun(100, func() {
		in.mu.Lock()
		c.watchdog.start(in, abort, nil, time.Hour)
		in.mu.Unlock()
		c.watchdog.kick()
		c.watchdog.stop()
	}); n != 0 {
		t.Errorf("%v allocations a watchdog, want 0", n)
	}
	in.sweeper.Stop()
}
