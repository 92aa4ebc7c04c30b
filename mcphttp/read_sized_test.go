// read_sized_test.go pins readAllSized: the announced length sizes the
// buffer, never the result — a body is read as io.ReadAll of
// io.LimitReader reads it, whatever was announced.

package mcphttp

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAllSizedReadsTheWholeBodyWhateverTheAnnouncedLength(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, tc := range []struct {
		name   string
		length int64
	}{
		{"exact", int64(len(body))},
		{"unknown", -1},
		{"zero", 0},
		{"announced shorter than sent", 5},
		{"announced longer than sent", 100},
		{"too large to trust", 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAllSized(iotest.OneByteReader(strings.NewReader(body)), tc.length, 1<<20)
			if err != nil || string(got) != body {
				t.Fatalf("got %q, %v; want the whole body", got, err)
			}
		})
	}
}

func TestReadAllSizedKeepsTheReadersError(t *testing.T) {
	boom := errors.New("boom")
	_, err := readAllSized(io.MultiReader(strings.NewReader("{}"), iotest.ErrReader(boom)), 2, 1<<20)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

// At most limit bytes are read, whatever the length announced: the same
// bytes io.LimitReader would give, and no error for the bytes left.
func TestReadAllSizedStopsAtItsLimit(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"result":{"text":"0123456789"}}`
	for _, length := range []int64{-1, 0, 5, 10, 11, int64(len(body)), 1000, 1 << 30} {
		for _, limit := range []int64{1, 10, 11, int64(len(body)), int64(len(body)) + 1} {
			got, err := readAllSized(iotest.OneByteReader(strings.NewReader(body)), length, limit)
			want, _ := io.ReadAll(io.LimitReader(strings.NewReader(body), limit))
			if err != nil || string(got) != string(want) {
				t.Errorf("length %d, limit %d: got %q, %v; want %q", length, limit, got, err, want)
			}
		}
	}
}

// A body of unknown length comes back in a slice of its own size: it is
// read into a pooled buffer and copied out once, not grown step by step.
func TestReadAllSizedOfUnknownLengthIsExactlySized(t *testing.T) {
	for _, n := range []int{0, 1, 511, 512, 4 << 10, 300 << 10} {
		body := strings.Repeat("x", n)
		got, err := readAllSized(iotest.HalfReader(strings.NewReader(body)), -1, 1<<20)
		if err != nil || string(got) != body {
			t.Fatalf("%d bytes: got %d, %v", n, len(got), err)
		}
		if cap(got) != len(got) {
			t.Errorf("%d bytes: a slice of capacity %d", n, cap(got))
		}
	}
}

// BenchmarkReadAllSizedUnknown reads a 64 KiB body of unknown length, as
// from a server that sends a large answer chunked.
func BenchmarkReadAllSizedUnknown(b *testing.B) {
	body := strings.Repeat("x", 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readAllSized(strings.NewReader(body), -1, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
