// fuzz_test.go fuzzes both halves of the codec: the reader never panics
// and only ever yields well-formed events, and whatever AppendEvent writes
// reads back as it was written.

package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzReader feeds the reader arbitrary streams. Every event it yields
// must be one AppendEvent could have written: no line break in the data,
// id or name (they are line terminators on the wire), no NUL in the id, data
// within the limit. Writing such an event and reading it back must give
// the same event.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: x\n\n",
		"id: 1\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n",
		"id: s1-1\nretry: 500\ndata: \n\n",
		": keepalive\n\n",
		"data: a\rdata: b\r\rid: 2\x00\r\n",
		"data:no space\ndata\n\n",
		"event: ping\n\nretry: x\n\ndata: " + strings.Repeat("z", 300) + "\n\n",
		"data: a\n",
	} {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(64))
	}
	f.Fuzz(func(t *testing.T, input []byte, max uint16) {
		limit := int(max)
		r := NewReader(bytes.NewReader(input), limit)
		if limit <= 0 {
			limit = 16 << 20
		}
		for n := 0; ; n++ {
			if n > len(input) {
				t.Fatalf("more events (%d) than input bytes (%d)", n, len(input))
			}
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				break
			}
			checkWellFormed(t, ev, limit)
			if id := r.LastEventID(); strings.ContainsAny(id, "\r\n\x00") {
				t.Fatalf("LastEventID %q has a line break or NUL", id)
			}
			again, err := NewReader(bytes.NewReader(AppendEvent(nil, ev)), 0).Next()
			if err != nil || !sameEvent(again, ev) {
				t.Fatalf("event %+v (data %q) re-read as %+v (data %q), %v", ev, ev.Data, again, again.Data, err)
			}
		}
	})
}

func checkWellFormed(t *testing.T, ev Event, limit int) {
	t.Helper()
	if bytes.ContainsAny(ev.Data, "\r") {
		t.Fatalf("data %q has a CR", ev.Data)
	}
	if strings.ContainsAny(ev.ID, "\r\n\x00") {
		t.Fatalf("id %q has a line break or NUL", ev.ID)
	}
	if strings.ContainsAny(ev.Name, "\r\n") {
		t.Fatalf("name %q has a line break", ev.Name)
	}
	if len(ev.Data) > limit {
		t.Fatalf("data of %d bytes over the limit of %d", len(ev.Data), limit)
	}
	if ev.Retry < 0 {
		t.Fatalf("negative retry %d", ev.Retry)
	}
}

func sameEvent(a, b Event) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Retry == b.Retry && bytes.Equal(a.Data, b.Data)
}

// FuzzRoundTrip writes arbitrary events and reads them back. Data without
// CR survives byte for byte; a CR (which the wire cannot carry) comes back
// as the LF it stands for, and never cuts the data short. Ids and names
// are taken as AppendEvent's callers give them: without line breaks.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), "p1-1", "", 0)
	f.Add([]byte("{\n  \"a\": 1\n}\n"), "0-12", "message", 5000)
	f.Add([]byte(""), "", "endpoint", -1)
	f.Add([]byte("a\r\nb\rc\n\r"), " id", " name", 1)
	f.Add([]byte("data: x\n\nid: y\n:"), "a:b", "e:f", 3)
	f.Fuzz(func(t *testing.T, data []byte, id, name string, retry int) {
		if strings.ContainsAny(id, "\r\n\x00") || strings.ContainsAny(name, "\r\n") {
			t.Skip("ids and names are single-line by contract")
		}
		wire := AppendEvent([]byte("prefix-is-kept"), Event{ID: id, Name: name, Retry: retry, Data: data})
		if !bytes.HasPrefix(wire, []byte("prefix-is-kept")) {
			t.Fatalf("AppendEvent did not append: %q", wire)
		}
		wire = wire[len("prefix-is-kept"):]
		r := NewReader(bytes.NewReader(wire), len(data)+1)
		got, err := r.Next()
		if err != nil {
			t.Fatalf("Next: %v (wire %q)", err, wire)
		}
		want := Event{ID: id, Name: name, Retry: max(retry, 0), Data: normalizeBreaks(data)}
		if !sameEvent(got, want) {
			t.Fatalf("read %+v (data %q), want %+v (data %q); wire %q", got, got.Data, want, want.Data, wire)
		}
		if id != "" && r.LastEventID() != id {
			t.Fatalf("LastEventID = %q, want %q", r.LastEventID(), id)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("a second event out of one: %v (wire %q)", err, wire)
		}
	})
}

// normalizeBreaks turns CRLF and lone CR into LF, as an event stream does.
func normalizeBreaks(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}
