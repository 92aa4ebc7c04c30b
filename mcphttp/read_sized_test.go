// read_sized_test.go pins readAllSized: the announced length sizes the
// buffer, never the result — a body is read as io.ReadAll reads it,
// whatever was announced.

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
			got, err := readAllSized(iotest.OneByteReader(strings.NewReader(body)), tc.length)
			if err != nil || string(got) != body {
				t.Fatalf("got %q, %v; want the whole body", got, err)
			}
		})
	}
}

func TestReadAllSizedKeepsTheReadersError(t *testing.T) {
	boom := errors.New("boom")
	_, err := readAllSized(io.MultiReader(strings.NewReader("{}"), iotest.ErrReader(boom)), 2)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}
