package wire

import (
	"testing"
	"time"
)

// A bounded stream says when a push takes it over its bound, and
// waitDrained waits until Next has brought it back within, or the stream
// ends, or the connection closes.
func TestABoundedStreamHoldsTheReaderUntilDrained(t *testing.T) {
	s := newStream()
	s.setLimit(10)
	if s.push(make([]byte, 6)) {
		t.Fatal("6 bytes of 10 over the bound")
	}
	if !s.push(make([]byte, 6)) {
		t.Fatal("12 bytes of 10 not over the bound")
	}
	waited := make(chan struct{})
	go func() { defer close(waited); s.waitDrained(nil) }()
	select {
	case <-waited:
		t.Fatal("waitDrained returned while 12 bytes of 10 wait")
	case <-time.After(20 * time.Millisecond): // it must still be waiting: nothing else could release it
	}
	if _, err := s.next(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-waited // 6 of 10: within the bound
	s.push(make([]byte, 20))
	closed := make(chan struct{})
	go func() { s.waitDrained(closed) }()
	close(closed) // the connection closing lets it go
	s.fail(ErrConnectionClosed)
	s.waitDrained(nil) // and after the end it never waits
	unbounded := newStream()
	if unbounded.push(make([]byte, 1<<20)) {
		t.Error("an unbounded stream over a bound")
	}
}
