// writer_test.go pins the outgoing framing: one message per line, line
// breaks compacted only where they are JSON whitespace, and no two
// concurrent messages ever interleaved.

package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

func TestAppendLine(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		want    string
		wantErr error
		rest    string // the rest of an answer in parts, after msg
	}{
		{"a one-line message is copied as is", `{"a": 1, "b":[1 ,2]}`, `{"a": 1, "b":[1 ,2]}`, nil, ""},
		{"line breaks between tokens are compacted", "{\n  \"a\": 1,\r\n  \"b\": [1, 2]\n}\n", `{"a":1,"b":[1,2]}`, nil, ""},
		{"escaped newlines in strings stay", "{\n\"s\": \"x\\ny\"\n}", `{"s":"x\ny"}`, nil, ""},
		{"big numbers stay digit for digit", "[\n123456789012345678901234567890, 1.50, -0e+3\n]", `[123456789012345678901234567890,1.50,-0e+3]`, nil, ""},
		{"html characters are not escaped", "{\n\"h\": \"<&>\"}", `{"h":"<&>"}`, nil, ""},
		{"a raw newline inside a string cannot be framed", "{\"s\": \"x\ny\"}", "", ErrMultiline, ""},
		{"an answer in parts is one line", `{"jsonrpc":"2.0","id":1,"result":`, `{"jsonrpc":"2.0","id":1,"result":{"a": 1}}`, nil, `{"a": 1}`},
		{"an answer in parts with line breaks is compacted", `{"jsonrpc":"2.0","id":1,"result":`, `{"jsonrpc":"2.0","id":1,"result":{"a":1}}`, nil, "{\n\"a\": 1\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			a := jsonrpc.Parts{Head: []byte(tt.msg)}
			if tt.rest != "" {
				a.Rest = []byte(tt.rest)
			}
			err := appendLine(&buf, a)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.want+"\n" {
				t.Errorf("got %q, want %q", buf.String(), tt.want+"\n")
			}
		})
	}
}

// lineRecorder checks the contract the stream relies on: each Write call
// carries exactly one whole line, and no two calls overlap.
type lineRecorder struct {
	t      *testing.T
	inside atomic.Int32
	mu     sync.Mutex
	ids    map[string]bool
}

func (r *lineRecorder) Write(p []byte) (int, error) {
	if r.inside.Add(1) != 1 {
		r.t.Error("two writes overlap")
	}
	defer r.inside.Add(-1)
	runtime.Gosched() // give an overlapping writer its chance
	if bytes.IndexByte(p, '\n') != len(p)-1 {
		r.t.Errorf("a write is not exactly one line: %.80q", p)
	}
	var m struct{ ID string }
	if err := json.Unmarshal(p, &m); err != nil {
		r.t.Errorf("torn line %.80q: %v", p, err)
	}
	r.mu.Lock()
	r.ids[m.ID] = true
	r.mu.Unlock()
	return len(p), nil
}

func TestLineWriterWritesWholeLinesOneAtATime(t *testing.T) {
	rec := &lineRecorder{t: t, ids: map[string]bool{}}
	lw := newLineWriter(rec)
	const writers, each = 20, 50
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			pad := strings.Repeat(fmt.Sprint(i%10), 1<<10)
			for j := range each {
				msg := fmt.Sprintf("{\n\"id\": \"%d-%d\",\n\"pad\": %q}", i, j, pad)
				if err := lw.Send(context.Background(), []byte(msg)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if len(rec.ids) != writers*each {
		t.Fatalf("%d distinct messages arrived, want %d", len(rec.ids), writers*each)
	}
}

func TestLineWriterFailureIsSticky(t *testing.T) {
	r, w := io.Pipe()
	_ = r.Close()
	lw := newLineWriter(w)
	err1 := lw.Send(context.Background(), []byte(`{}`))
	err2 := lw.Send(context.Background(), []byte(`{}`))
	if !errors.Is(err1, io.ErrClosedPipe) || err2 != err1 {
		t.Fatalf("errors %v, %v", err1, err2)
	}
}

func TestLineWriterDropsCancelledMessages(t *testing.T) {
	var buf bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := newLineWriter(&buf).Send(ctx, []byte(`{}`)); !errors.Is(err, context.Canceled) || buf.Len() != 0 {
		t.Fatalf("err %v, wrote %q", err, buf.String())
	}
}

// An answer in parts is framed as the same answer in one slice: the same
// line, or the same refusal.
func FuzzAppendLineOfAnAnswerInParts(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":`), []byte(`{"a": 1}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":`), []byte("{\n\"a\": 1\n}"))
	f.Add([]byte("{\"s\": \"x\n"), []byte(`y"}`))
	f.Fuzz(func(t *testing.T, head, rest []byte) {
		parts := jsonrpc.Parts{Head: head, Rest: rest}
		var a, b bytes.Buffer
		errA := appendLine(&a, parts)
		errB := appendLine(&b, jsonrpc.Parts{Head: parts.Bytes()})
		if (errA == nil) != (errB == nil) || a.String() != b.String() {
			t.Fatalf("in parts %q (%v), whole %q (%v)", a.Bytes(), errA, b.Bytes(), errB)
		}
	})
}
