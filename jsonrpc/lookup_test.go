package jsonrpc_test

import (
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// LookupIs answers as LookupString compared with want would, escapes and
// all, and makes no string when the value has no escape.
func TestLookupIsAgreesWithLookupString(t *testing.T) {
	for _, c := range []struct {
		obj, key, want string
		is             bool
	}{
		{`{"resultType":"task"}`, "resultType", "task", true},
		{`{"resultType":"tasks"}`, "resultType", "task", false},
		{`{"resultType":"t\u0061sk"}`, "resultType", "task", true},
		{`{"resultType":7}`, "resultType", "7", false},
		{`{"other":"task"}`, "resultType", "task", false},
		{`{"resultType":""}`, "resultType", "", true},
		{`[1]`, "resultType", "task", false},
	} {
		if got := jsonrpc.LookupIs([]byte(c.obj), c.key, c.want); got != c.is {
			t.Errorf("LookupIs(%s, %q, %q) = %v", c.obj, c.key, c.want, got)
		}
		s, ok := jsonrpc.LookupString([]byte(c.obj), c.key)
		if (ok && s == c.want) != c.is {
			t.Errorf("LookupString(%s, %q) = %q, %v: disagrees with LookupIs", c.obj, c.key, s, ok)
		}
	}
	obj := []byte(`{"id":1,"resultType":"input_required"}`)
	if n := testing.AllocsPerRun(100, func() { jsonrpc.LookupIs(obj, "resultType", "input_required") }); n != 0 {
		t.Errorf("LookupIs allocates %v times, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { jsonrpc.LookupText(obj, "resultType") }); n != 0 {
		t.Errorf("LookupText of a string without escapes allocates %v times, want 0", n)
	}
	if text, ok := jsonrpc.LookupText([]byte(`{"name":"a\"b"}`), "name"); !ok || string(text) != `a"b` {
		t.Errorf("LookupText of an escaped string = %q, %v", text, ok)
	}
}

// BenchmarkLookupAbsent looks up a member a 16 KiB tool result does not
// have, as the relay's resultType checks do on every call: a walk of the
// whole result. (Searching the bytes for the key and for \u first, to skip
// the walk, measured slower on such text: 7.7 µs against 5.8 µs. Values
// skipped as valid JSON, their strings by bytes.IndexByte: 7.7–8.0 µs
// against 0.42–0.43 µs, interleaved.)
func BenchmarkLookupAbsent(b *testing.B) {
	text := strings.Repeat(`A line of a file the tool read.\n`, 500)
	res := []byte(`{"content":[{"type":"text","text":"` + text + `"}],"isError":false}`)
	b.SetBytes(int64(len(res)))
	b.ReportAllocs()
	for b.Loop() {
		if raw, err := jsonrpc.Lookup(res, "resultType"); raw != nil || err != nil {
			b.Fatal(raw, err)
		}
	}
}

// A call's arguments with no twin keys cost FoldTwins no allocation: the
// keys of an object of a few are compared where they lie.
func TestFoldTwinsAllocatesNothingForArgumentsWithoutTwins(t *testing.T) {
	args := []byte(`{"path":"/srv/docs/a.md","limit":10,"opts":{"deep":true,"tags":["a","b"]}}`)
	if _, _, ok := jsonrpc.FoldTwins(args); ok {
		t.Fatalf("FoldTwins(%s) found twins", args)
	}
	if n := testing.AllocsPerRun(100, func() { jsonrpc.FoldTwins(args) }); n != 0 {
		t.Errorf("FoldTwins allocates %v times, want 0", n)
	}
}
