// lines_test.go pins the line reader against a plain reference splitter,
// in tables and under fuzzing, at buffer sizes that force long lines
// through the slow path.

package stdio

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// referenceLines is what the reader must produce: split on "\n", drop one
// "\r" before it, oversized lines become ErrLineTooLong, blank lines go.
func referenceLines(data []byte, max int) (lines []string, tooLong int) {
	parts := bytes.Split(data, []byte("\n"))
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1] // data ended with "\n"
	}
	for _, p := range parts {
		p = bytes.TrimSuffix(p, []byte("\r"))
		switch {
		case len(p) > max:
			lines = append(lines, "<too long>")
			tooLong++
		case !isBlank(p):
			lines = append(lines, string(p))
		}
	}
	return lines, tooLong
}

func readAll(t testing.TB, r io.Reader, max, bufSize int) []string {
	lr := newLineReaderSize(r, max, bufSize)
	var got []string
	for {
		line, err := lr.Next()
		switch {
		case errors.Is(err, ErrLineTooLong):
			got = append(got, "<too long>")
		case errors.Is(err, io.EOF):
			return got
		case err != nil:
			t.Fatalf("Next: %v", err)
		default:
			got = append(got, string(line))
		}
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("a", 40)
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"lines end at LF", "a\nb\n", 10, []string{"a", "b"}},
		{"CRLF is a terminator", "a\r\nb\r\n", 10, []string{"a", "b"}},
		{"a last line needs no terminator", "a\nb", 10, []string{"a", "b"}},
		{"blank lines are skipped", "\n \t\r\n\na\n\n", 10, []string{"a"}},
		{"a line at the limit passes", "0123456789\n", 10, []string{"0123456789"}},
		{"a line at the limit passes with CRLF", "0123456789\r\n", 10, []string{"0123456789"}},
		{"one byte over the limit is too long", "0123456789A\nok\n", 10, []string{"<too long>", "ok"}},
		{"a long line spanning buffers is too long", long + "\nok\n", 10, []string{"<too long>", "ok"}},
		{"a long last line without terminator is too long", "ok\n" + long, 10, []string{"ok", "<too long>"}},
		{"a long line within the limit spans buffers", long + "\n", 100, []string{long}},
		{"a CR inside a line stays", "a\rb\n", 10, []string{"a\rb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, bufSize := range []int{16, 4096} {
				got := readAll(t, strings.NewReader(tt.in), tt.max, bufSize)
				if strings.Join(got, "|") != strings.Join(tt.want, "|") {
					t.Errorf("bufSize %d: got %q, want %q", bufSize, got, tt.want)
				}
			}
		})
	}
}

func TestLineReaderReportsReadErrors(t *testing.T) {
	boom := errors.New("boom")
	lr := newLineReader(iotest.ErrReader(boom), 10)
	if _, err := lr.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n"), uint8(4))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), uint8(40))
	f.Add([]byte(strings.Repeat("x", 100)+"\r\n"+strings.Repeat("y", 10)), uint8(16))
	f.Add([]byte("\r\r\n\r"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		want, _ := referenceLines(data, int(max))
		for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data)), iotest.HalfReader(bytes.NewReader(data))} {
			got := readAll(t, r, int(max), 16)
			if strings.Join(got, "\x00|") != strings.Join(want, "\x00|") {
				t.Fatalf("max %d, input %q:\n got %q\nwant %q", max, data, got, want)
			}
		}
	})
}
