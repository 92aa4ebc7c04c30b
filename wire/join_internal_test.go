// join_internal_test.go pins the frameJoiner: whatever pieces a frame
// comes in, it reaches the connection in one write, byte for byte, and
// nothing is held once a frame is complete.

package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// Pieces records each write it is given as one piece: what the joiner
// wrote, or what CopyNext did (copynext_test.go, outside the package).
type Pieces struct{ Got [][]byte }

func (w *Pieces) Write(p []byte) (int, error) {
	w.Got = append(w.Got, bytes.Clone(p))
	return len(p), nil
}

// testFrame is one frame's bytes: a header in the length form given (7,
// 16 or 64 bits; 0 picks the shortest), a mask key if masked, n payload
// bytes.
func testFrame(n int, masked bool, form int) []byte {
	b := []byte{0x82, 0}
	if masked {
		b[1] = 0x80
	}
	if form == 0 {
		form = 7
		if n >= 126 {
			form = 16
		}
		if n > 0xffff {
			form = 64
		}
	}
	switch form {
	case 7:
		b[1] |= byte(n)
	case 16:
		b[1] |= 126
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b[1] |= 127
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	if masked {
		b = append(b, 1, 2, 3, 4)
	}
	for i := range n {
		b = append(b, byte(i))
	}
	return b
}

func TestFrameJoinerWritesEachFrameAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		masked bool
		form   int
		piece  int // the size of each write it is given, as the library's buffer
	}{
		{"empty frame (a close or a final continuation)", 0, false, 0, 4096},
		{"7-bit length, masked, in one piece", 100, true, 0, 4096},
		{"16-bit length, masked, in 4 KiB pieces", 60000, true, 0, 4096},
		{"64-bit length, masked, in 4 KiB pieces", 256 << 10, true, 0, 4096},
		{"64-bit length, unmasked, a byte at a time", 70000, false, 0, 1},
		{"a long length form for a short payload", 5, true, 64, 1},
		{"a frame that ends on a piece's boundary", 4096 - 14, true, 64, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frame := testFrame(tc.n, tc.masked, tc.form)
			stream := append(bytes.Clone(frame), frame...)
			var w Pieces
			j := frameJoiner{w: &w}
			for p := stream; len(p) > 0; {
				k := min(tc.piece, len(p))
				if n, err := j.Write(p[:k]); n != k || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				p = p[k:]
			}
			if len(j.buf) != 0 || j.nh != 0 || j.left != 0 {
				t.Fatalf("held %d bytes after two complete frames", len(j.buf))
			}
			// Two frames written in pieces that may straddle them: at most
			// one write more than the frames, never one per piece.
			if len(w.Got) > 3 || !bytes.Equal(bytes.Join(w.Got, nil), stream) {
				t.Fatalf("%d writes for 2 frames of %d bytes; bytes equal: %v", len(w.Got), len(frame),
					bytes.Equal(bytes.Join(w.Got, nil), stream))
			}
		})
	}
}

func TestFrameJoinerWritesALongFrameInPieces(t *testing.T) {
	frame := testFrame(3*maxJoin, true, 0)
	var w Pieces
	j := frameJoiner{w: &w}
	for p := frame; len(p) > 0; p = p[min(4096, len(p)):] {
		if _, err := j.Write(p[:min(4096, len(p))]); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.Got) < 3 || len(w.Got) > 4 || !bytes.Equal(bytes.Join(w.Got, nil), frame) {
		t.Fatalf("%d writes for a frame of %d bytes", len(w.Got), len(frame))
	}
	for _, g := range w.Got {
		if len(g) > maxJoin+4096 {
			t.Fatalf("a write of %d bytes: more than maxJoin held", len(g))
		}
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestFrameJoinerReportsTheConnectionsError(t *testing.T) {
	j := frameJoiner{w: failing{}}
	frame := testFrame(10, true, 0)
	if n, err := j.Write(frame[:5]); n != 5 || err != nil {
		t.Fatalf("a frame's first bytes: Write = %d, %v; want them held", n, err)
	}
	if n, err := j.Write(frame[5:]); n != 0 || err == nil {
		t.Fatalf("the frame's end: Write = %d, %v; want the connection's error", n, err)
	}
}

// FuzzFrameJoiner cuts a stream of frames into pieces at the fuzzer's
// choice. The writes add up to the stream. After each piece the joiner
// holds what came since its last write, unless the stream so far ends at
// a frame's end or that reached maxJoin.
func FuzzFrameJoiner(f *testing.F) {
	f.Add([]byte{0, 1, 200, 7, 3}, []byte{1, 3, 17})
	f.Add([]byte{130, 126, 0, 255}, []byte{255, 1})
	f.Fuzz(func(t *testing.T, spec, cuts []byte) {
		// Each two bytes of spec make a frame: a size and a form.
		var stream []byte
		var ends []int
		for i := 0; i+1 < len(spec) && len(ends) < 16; i += 2 {
			n := int(spec[i]) * (1 + int(spec[i+1]>>4)*97)
			form := []int{0, 7, 16, 64}[spec[i+1]>>1&3]
			if form == 7 && n > 125 || form == 16 && n > 0xffff {
				form = 0 // a form too short for n
			}
			stream = append(stream, testFrame(n, spec[i+1]&1 == 1, form)...)
			ends = append(ends, len(stream))
		}
		var w Pieces
		j := frameJoiner{w: &w}
		at, written := 0, 0
		for k := 0; at < len(stream); k++ {
			piece := 1
			if len(cuts) > 0 {
				piece = 1 + int(cuts[k%len(cuts)])*37
			}
			piece = min(piece, len(stream)-at)
			if _, err := j.Write(stream[at : at+piece]); err != nil {
				t.Fatal(err)
			}
			at += piece
			atEnd := false
			for _, e := range ends {
				atEnd = atEnd || e == at
			}
			held := at - written
			if atEnd || held >= maxJoin {
				held, written = 0, at
			}
			if len(j.buf) != held {
				t.Fatalf("after %d of %d bytes (frame ends %v): holds %d, want %d", at, len(stream), ends, len(j.buf), held)
			}
		}
		if !bytes.Equal(bytes.Join(w.Got, nil), stream) {
			t.Fatal("the writes do not add up to the stream")
		}
	})
}
