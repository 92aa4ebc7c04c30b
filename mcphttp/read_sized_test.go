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
