// sse_test.go pins the text/event-stream codec: what AppendEvent writes
// Reader.Next gives back, and the reader follows the WHATWG parsing rules
// for the line endings, comments and fields real servers send.

package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// readEvents reads every event of input, returning the error that ended
// the stream (io.EOF for a clean end).
func readEvents(input string, max int) ([]Event, *Reader, error) {
	r := NewReader(strings.NewReader(input), max)
	var out []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return out, r, err
		}
		out = append(out, ev)
	}
}

// chunkReader hands out its input a few bytes at a time, so that line
// breaks (CRLF especially) straddle reads.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   Event
		want string // the data read back
	}{
		{"plain data", Event{Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"LF in data is carried over several data fields", Event{Data: []byte("a\nb\n\nc")}, "a\nb\n\nc"},
		{"leading and trailing LF survive", Event{Data: []byte("\na\n")}, "\na\n"},
		{"CRLF in data comes back as LF", Event{Data: []byte("{\r\n  \"a\": 1\r\n}")}, "{\n  \"a\": 1\n}"},
		{"lone CR in data comes back as LF, never cuts the data", Event{Data: []byte("{\"a\":1,\r\"b\":2}")}, "{\"a\":1,\n\"b\":2}"},
		{"CR in data cannot inject a field", Event{ID: "1", Data: []byte("x\rid: evil\revent: evil\r\rdata: y")}, "x\nid: evil\nevent: evil\n\ndata: y"},
		{"empty data is still an event", Event{ID: "e", Data: nil}, ""},
		{"data that looks like fields stays data", Event{Data: []byte(": not a comment\nid: 9\nretry: 1")}, ": not a comment\nid: 9\nretry: 1"},
		{"leading space in data is kept", Event{Data: []byte("  two spaces")}, "  two spaces"},
		{"unicode", Event{Data: []byte("héllo, 世界 🌍 \u2028 \u0085")}, "héllo, 世界 🌍 \u2028 \u0085"},
		{"id, name and retry", Event{ID: "p1-7", Name: "message", Retry: 1500, Data: []byte("x")}, "x"},
		{"id with colon and leading space", Event{ID: " s:1", Name: "endpoint", Data: []byte("/messages?sessionId=1")}, "/messages?sessionId=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wire := AppendEvent(nil, tc.ev)
			for _, chunk := range []int{1 << 20, 1, 2, 3} {
				r := NewReader(&chunkReader{data: bytes.Clone(wire), n: chunk}, 0)
				got, err := r.Next()
				if err != nil {
					t.Fatalf("chunks of %d: Next: %v (wire %q)", chunk, err, wire)
				}
				if string(got.Data) != tc.want || got.ID != tc.ev.ID || got.Name != tc.ev.Name || got.Retry != tc.ev.Retry {
					t.Fatalf("chunks of %d: got %+v (data %q), want id %q name %q retry %d data %q (wire %q)",
						chunk, got, got.Data, tc.ev.ID, tc.ev.Name, tc.ev.Retry, tc.want, wire)
				}
				if tc.ev.ID != "" && r.LastEventID() != tc.ev.ID {
					t.Fatalf("LastEventID = %q, want %q", r.LastEventID(), tc.ev.ID)
				}
				if _, err := r.Next(); err != io.EOF {
					t.Fatalf("after the event: %v, want io.EOF", err)
				}
			}
		})
	}
}

func TestRoundTripOfAStream(t *testing.T) {
	evs := []Event{
		{ID: "0-1", Data: []byte("first")},
		{Data: []byte("no id")},
		{ID: "0-2", Name: "message", Data: []byte("line 1\nline 2")},
	}
	var wire []byte
	for _, ev := range evs {
		wire = AppendEvent(wire, ev)
	}
	wire = append(wire, ": keepalive\n\n"...)
	got, r, err := readEvents(string(wire), 0)
	if err != io.EOF {
		t.Fatalf("stream ended with %v", err)
	}
	if len(got) != len(evs) {
		t.Fatalf("read %d events, want %d", len(got), len(evs))
	}
	for i := range evs {
		if got[i].ID != evs[i].ID || got[i].Name != evs[i].Name || !bytes.Equal(got[i].Data, evs[i].Data) {
			t.Errorf("event %d = %+v, want %+v", i, got[i], evs[i])
		}
	}
	if r.LastEventID() != "0-2" {
		t.Errorf("LastEventID = %q", r.LastEventID())
	}
}

func TestReaderLineEndings(t *testing.T) {
	const lf = "id: 1\nevent: e\ndata: a\ndata: b\n\n: comment\ndata: c\n\n"
	for _, tc := range []struct{ name, input string }{
		{"LF", lf},
		{"CRLF", strings.ReplaceAll(lf, "\n", "\r\n")},
		{"lone CR", strings.ReplaceAll(lf, "\n", "\r")},
		{"mixed", "id: 1\r\nevent: e\rdata: a\ndata: b\r\n\r: comment\r\ndata: c\n\r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{1 << 20, 1, 2} {
				r := NewReader(&chunkReader{data: []byte(tc.input), n: chunk}, 0)
				first, err := r.Next()
				if err != nil || first.ID != "1" || first.Name != "e" || string(first.Data) != "a\nb" {
					t.Fatalf("chunks of %d: first = %+v (%q), %v", chunk, first, first.Data, err)
				}
				second, err := r.Next()
				if err != nil || second.ID != "" || second.Name != "" || string(second.Data) != "c" {
					t.Fatalf("chunks of %d: second = %+v (%q), %v", chunk, second, second.Data, err)
				}
				if _, err := r.Next(); err != io.EOF {
					t.Fatalf("chunks of %d: end = %v", chunk, err)
				}
			}
		})
	}
}

func TestReaderFieldRules(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        []string // data of each event
		lastID      string
	}{
		{"comments are skipped", ": hello\n:\ndata: x\n: inside\n\n", []string{"x"}, ""},
		{"an event without data is skipped", "event: ping\n\nid: 5\n\ndata: y\n\n", []string{"y"}, "5"},
		{"multi-line data is joined with LF", "data: a\ndata: b\ndata\ndata:c\n\n", []string{"a\nb\n\nc"}, ""},
		{"only one space after the colon is removed", "data:  two\n\n", []string{" two"}, ""},
		{"no space after the colon", "data:x\n\n", []string{"x"}, ""},
		{"unknown fields are ignored", "foo: bar\nDATA: no\ndata: z\n\n", []string{"z"}, ""},
		{"an id with NUL is ignored", "id: ok\ndata: 1\n\nid: bad\x00\ndata: 2\n\n", []string{"1", "2"}, "ok"},
		{"the last event id is kept across events without one", "id: 7\ndata: 1\n\ndata: 2\n\n", []string{"1", "2"}, "7"},
		{"an empty id resets the last event id", "id: 7\ndata: 1\n\nid\ndata: 2\n\n", []string{"1", "2"}, ""},
		{"a dataless event still sets the last event id", "id: 3\ndata: 1\n\nid: 4\nretry: 10\n\n", []string{"1"}, "4"},
		{"empty data line makes an empty event", "data\n\ndata:\n\n", []string{"", ""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, r, err := readEvents(tc.input, 0)
			if err != io.EOF {
				t.Fatalf("ended with %v", err)
			}
			var data []string
			for _, ev := range got {
				data = append(data, string(ev.Data))
			}
			if strings.Join(data, "|") != strings.Join(tc.want, "|") || len(data) != len(tc.want) {
				t.Errorf("data = %q, want %q", data, tc.want)
			}
			if r.LastEventID() != tc.lastID {
				t.Errorf("LastEventID = %q, want %q", r.LastEventID(), tc.lastID)
			}
		})
	}
}

func TestReaderRetry(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        int
	}{
		{"a number is kept", "retry: 5000\ndata: x\n\n", 5000},
		{"not a number is ignored", "retry: soon\ndata: x\n\n", 0},
		{"negative is ignored", "retry: -1\ndata: x\n\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, _ := readEvents(tc.input, 0)
			if len(got) != 1 || got[0].Retry != tc.want {
				t.Errorf("events = %+v, want retry %d", got, tc.want)
			}
		})
	}
}

func TestReaderTooLarge(t *testing.T) {
	const max = 1 << 10
	for _, tc := range []struct {
		name, input string
		want        error
	}{
		{"data of exactly the limit is read", "data: " + strings.Repeat("a", max) + "\n\n", nil},
		{"one data line over the limit", "data: " + strings.Repeat("a", max+1) + "\n\n", ErrTooLarge},
		{"a line far over the limit is refused before it is buffered", "data: " + strings.Repeat("a", 64<<10) + "\n\n", ErrTooLarge},
		{"many data lines adding up over the limit", strings.Repeat("data: "+strings.Repeat("a", 100)+"\n", 11) + "\n", ErrTooLarge},
		{"the limit is per event", strings.Repeat("data: "+strings.Repeat("a", 600)+"\n\n", 4), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := readEvents(tc.input, max)
			if tc.want == nil {
				if err != io.EOF || len(got) == 0 {
					t.Fatalf("err = %v after %d events, want clean end", err, len(got))
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestReaderEndOfStream(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		events      int
		want        error
	}{
		{"a clean end is io.EOF", "data: a\n\n", 1, io.EOF},
		{"an empty stream is io.EOF", "", 0, io.EOF},
		{"an event cut off before its blank line is dropped", "data: a\n\ndata: b\n", 1, io.ErrUnexpectedEOF},
		{"a last line without terminator", "data: a\n\ndata: b", 1, io.ErrUnexpectedEOF},
		{"trailing fields without data end cleanly", "data: a\n\nid: 9\n", 1, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := readEvents(tc.input, 0)
			if len(got) != tc.events || err != tc.want {
				t.Errorf("%d events, err %v; want %d, %v", len(got), err, tc.events, tc.want)
			}
		})
	}
}

func TestReaderDataIsACopy(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: second\n\n"), 0)
	a, _ := r.Next()
	b, _ := r.Next()
	if string(a.Data) != "first" || string(b.Data) != "second" {
		t.Errorf("data = %q, %q: the first event's data was overwritten", a.Data, b.Data)
	}
}

// The retry field counts wherever it comes, in an event without data too
// (a priming event), and the latest one wins.
func TestReaderKeepsTheLatestRetry(t *testing.T) {
	r := NewReader(strings.NewReader("retry: 500\nid: a\n\nretry: 300\nid: b\ndata:\n\ndata: x\n\n"), 0)
	if r.Retry() != 0 {
		t.Fatalf("Retry before reading: %v", r.Retry())
	}
	ev, err := r.Next()
	if err != nil || len(ev.Data) != 0 || r.Retry() != 300*time.Millisecond || r.LastEventID() != "b" {
		t.Fatalf("first event %+v %v: retry %v, last id %q", ev, err, r.Retry(), r.LastEventID())
	}
}
