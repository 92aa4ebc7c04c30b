package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"
)

// Output is a buffer safe for concurrent writers and readers: what a child
// or a logger writes while the test reads it. Await blocks until it
// matches, which is how a test waits for a program it started: the
// program's output is the only event it has. Its zero value is ready.
type Output struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	wake chan struct{}
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.wake != nil {
		close(o.wake)
		o.wake = nil
	}
	return o.buf.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Bytes returns a copy of what was written so far.
func (o *Output) Bytes() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.buf.Bytes())
}

// Await returns the first match of re in the output, waiting for it at
// most Bound.
func (o *Output) Await(tb testing.TB, re *regexp.Regexp) string {
	tb.Helper()
	deadline := time.NewTimer(Bound)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		m := re.FindString(o.buf.String())
		if o.wake == nil {
			o.wake = make(chan struct{})
		}
		wake := o.wake
		o.mu.Unlock()
		if m != "" {
			return m
		}
		select {
		case <-wake:
		case <-deadline.C:
			tb.Fatalf("no %s within %v; output:\n%s", re, Bound, o)
		}
	}
}

// stopGrace is how long a started program has to end once interrupted
// before it is killed.
const stopGrace = 10 * time.Second

// Start starts cmd, one of the project's programs, with its stderr
// collected, and stops it when tb ends: interrupted first, so that it
// stops what it started itself, and killed if it has not ended after
// ten seconds.
func Start(tb testing.TB, cmd *exec.Cmd) *Output {
	tb.Helper()
	stderr := &Output{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(stopGrace):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return stderr
}
