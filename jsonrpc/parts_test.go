package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// An answer is the bytes AppendResult writes, however it is held: as one
// slice (Bytes), written a part at a time (WriteTo), or measured (Len).
// From splitFrom on, the result is not copied: the answer holds the
// caller's own slice.
func TestAnAnswerIsTheResponseAppendResultWritesAndLeavesALongResultWhereItIs(t *testing.T) {
	for _, n := range []int{0, 2, 100, splitFrom - 1, splitFrom, 200 << 10} {
		result := json.RawMessage{}
		if n > 0 {
			result = json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`)
		}
		want := AppendResult(nil, ID(`"a"`), result)
		for name, a := range map[string]Parts{"ResultParts": ResultParts(ID(`"a"`), result), "splitResultParts": splitResultParts(ID(`"a"`), result)} {
			if got := a.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("%d bytes, %s: Bytes %.80q, want %.80q", n, name, got, want)
			}
			var w bytes.Buffer
			if k, err := a.WriteTo(&w); err != nil || k != int64(len(want)) || !bytes.Equal(w.Bytes(), want) {
				t.Errorf("%d bytes, %s: WriteTo wrote %d (%v): %.80q", n, name, k, err, w.Bytes())
			}
			if a.Len() != len(want) {
				t.Errorf("%d bytes, %s: Len %d, want %d", n, name, a.Len(), len(want))
			}
		}
		split := ResultParts(ID(`"a"`), result).Rest != nil
		if split != (n >= splitFrom) {
			t.Errorf("%d bytes: split %v", n, split)
		}
		if split && &ResultParts(ID(`"a"`), result).Rest[0] != &result[0] {
			t.Errorf("%d bytes: the result was copied", n)
		}
	}
}

// The zero Answer is no response: nothing to write.
func TestTheZeroAnswerIsNoResponse(t *testing.T) {
	var a Parts
	var w bytes.Buffer
	if a.Bytes() != nil || a.Len() != 0 {
		t.Errorf("Bytes %q, Len %d", a.Bytes(), a.Len())
	}
	if k, err := a.WriteTo(&w); k != 0 || err != nil || w.Len() != 0 {
		t.Errorf("WriteTo wrote %d (%v)", k, err)
	}
}

// ResultPartsFrom answers head, rest and a closing brace, leaving a long
// rest where it is and appending a short one to head.
func TestResultAnswerFromLeavesOnlyALongRestWhereItIs(t *testing.T) {
	for _, n := range []int{0, 10, splitFrom - 1, splitFrom} {
		head := AppendResultHead(nil, ID("1"))
		rest := []byte(strings.Repeat("x", n))
		want := string(head) + string(rest) + "}"
		a := ResultPartsFrom(bytes.Clone(head), rest)
		if string(a.Bytes()) != want || a.Len() != len(want) {
			t.Errorf("%d bytes: %.80q", n, a.Bytes())
		}
		if left := a.Rest != nil && &a.Rest[0] == &rest[0]; left != (n >= splitFrom) {
			t.Errorf("%d bytes: rest left where it is: %v", n, left)
		}
	}
}

// A message's parts are what Append writes; a request's or a
// notification's params from splitFrom on are left where they are.
func TestAMessagesPartsAreWhatAppendWritesAndLeaveLongParamsWhereTheyAre(t *testing.T) {
	for _, n := range []int{0, 2, splitFrom - 1, splitFrom} {
		params := json.RawMessage(nil)
		if n > 0 {
			params = json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`)
		}
		for _, m := range []*Message{
			{ID: ID("1"), Method: "tools/call", Params: params},
			{Method: "notifications/progress", Params: params},
			{ID: ID("1"), Result: params},
		} {
			p := m.Parts()
			if want := m.Append(nil); !bytes.Equal(p.Bytes(), want) || p.Len() != len(want) {
				t.Errorf("%d bytes, kind %d: %.80q, want %.80q", n, m.Kind(), p.Bytes(), want)
			}
			left := p.Rest != nil && &p.Rest[0] == &params[0]
			if want := n >= splitFrom && m.Kind() != KindResult; left != want {
				t.Errorf("%d bytes, kind %d: params left where they are: %v", n, m.Kind(), left)
			}
		}
	}
}
