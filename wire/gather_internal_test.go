// gather_internal_test.go pins gatherConn: what is written while a batch
// is held reaches the socket in one write at the flush, in order; a write
// too big for the batch goes out at once, after what was held; and after
// stop nothing is held.

package wire

import (
	"bytes"
	"net"
	"slices"
	"testing"
)

// recordingConn is a net.Conn that records each write to it.
type recordingConn struct {
	net.Conn
	writes [][]byte
}

func (r *recordingConn) Write(p []byte) (int, error) {
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func TestGatherConnHoldsUntilTheFlush(t *testing.T) {
	rec := &recordingConn{}
	g := &gatherConn{Conn: rec}
	_, _ = g.Write([]byte("a")) // not held: at once
	g.hold()
	_, _ = g.Write([]byte("b"))
	_, _ = g.Write([]byte("c"))
	if len(rec.writes) != 1 {
		t.Fatalf("held writes reached the socket: %q", rec.writes)
	}
	if err := g.flush(); err != nil {
		t.Fatal(err)
	}
	_, _ = g.Write([]byte("d")) // the flush ended the batch
	want := [][]byte{[]byte("a"), []byte("bc"), []byte("d")}
	if !slices.EqualFunc(rec.writes, want, bytes.Equal) {
		t.Fatalf("writes %q, want %q", rec.writes, want)
	}
}

func TestGatherConnWritesABigMessageAtOnceAfterTheHeld(t *testing.T) {
	rec := &recordingConn{}
	g := &gatherConn{Conn: rec}
	g.hold()
	_, _ = g.Write([]byte("small"))
	big := bytes.Repeat([]byte("x"), gatherLimit)
	if n, err := g.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	got := bytes.Join(rec.writes, nil)
	if !bytes.Equal(got, append([]byte("small"), big...)) {
		t.Fatalf("the socket got %d bytes, not the held then the big", len(got))
	}
	if err := g.flush(); err != nil || len(bytes.Join(rec.writes, nil)) != len(got) {
		t.Fatalf("the flush wrote again: %v", err)
	}
}

func TestGatherConnHoldsNothingAfterStop(t *testing.T) {
	rec := &recordingConn{}
	g := &gatherConn{Conn: rec}
	g.hold()
	_, _ = g.Write([]byte("held"))
	g.stop()
	g.hold()
	_, _ = g.Write([]byte("close frame"))
	want := [][]byte{[]byte("held"), []byte("close frame")}
	if !slices.EqualFunc(rec.writes, want, bytes.Equal) {
		t.Fatalf("writes %q, want %q", rec.writes, want)
	}
}
