package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzParse checks the envelope parser against encoding/json: it accepts
// exactly the valid JSON documents, never panics, and a parsed message
// written back parses to the same envelope.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1e400}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"a":"\ud800"}`, `-0.0e-1`, `[[[[]]]]`, `{"jsonrpc":"2.0","id":1,"method":"\u0070ing"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if Valid(data) != json.Valid(data) {
			t.Fatalf("Valid=%v, encoding/json says %v for %q", Valid(data), json.Valid(data), data)
		}
		m, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("non-ParseError %v", err)
			}
			if (pe.Code == CodeParseError) == json.Valid(data) && len(data) > 0 {
				t.Fatalf("code %d for valid=%v input %q", pe.Code, json.Valid(data), data)
			}
			if !json.Valid(pe.Response()) {
				t.Fatalf("error answer is not JSON: %s", pe.Response())
			}
			return
		}
		out := m.Append(nil)
		if p := m.splitParts(); !bytes.Equal(p.Bytes(), out) || p.Len() != len(out) {
			t.Fatalf("the message in parts %q, want %q", p.Bytes(), out)
		}
		if m.Kind() == KindResult {
			// A result written in parts is the same response.
			if a := splitResultParts(m.ID, m.Result); !bytes.Equal(a.Bytes(), out) || a.Len() != len(out) {
				t.Fatalf("the answer in parts %q, want %q", a.Bytes(), out)
			}
		}
		if !json.Valid(out) {
			t.Fatalf("re-encoded message is not JSON: %s", out)
		}
		m2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-encoded message does not parse: %v\n%s", err, out)
		}
		if m2.Method != m.Method || string(m2.ID) != string(m.ID) || string(m2.Params) != string(m.Params) ||
			string(m2.Result) != string(m.Result) || string(m2.Error) != string(m.Error) {
			t.Fatalf("round trip changed the envelope:\n%q\n%q", data, out)
		}
		// The method must be what encoding/json reads.
		var ref map[string]json.RawMessage
		var method string
		if json.Unmarshal(data, &ref) == nil && json.Unmarshal(ref["method"], &method) == nil && method != m.Method {
			t.Fatalf("method %q, encoding/json reads %q", m.Method, method)
		}
	})
}

// FuzzLookup checks Lookup agrees with encoding/json on valid objects.
func FuzzLookup(f *testing.F) {
	f.Add([]byte(`{"name":"a","arguments":{"x":1}}`), "name")
	f.Add([]byte(`{"n\u0061me":"b"}`), "name")
	f.Add([]byte(`{"content":[{"type":"text","text":"line\nline"}],"result\u0054ype":"task"}`), "resultType")
	f.Add([]byte(`{"content":[{"type":"text","text":"resultType"}]}`), "resultType")
	f.Add([]byte(` {"a":1} `), "b")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		var ref map[string]json.RawMessage
		if json.Unmarshal(data, &ref) != nil || ref == nil {
			return
		}
		got, err := Lookup(data, key)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", data, err)
		}
		_, ok := ref[key]
		if ok != (got != nil) {
			t.Fatalf("Lookup(%q, %q) = %s, encoding/json has %v", data, key, got, ok)
		}
		if ok && !json.Valid(got) {
			t.Fatalf("Lookup returned invalid JSON %q", got)
		}
		// LookupText's characters are LookupString's string.
		s, sok := LookupString(data, key)
		text, tok := LookupText(data, key)
		if sok != tok || string(text) != s {
			t.Fatalf("LookupText(%q, %q) = %q, %v; LookupString %q, %v", data, key, text, tok, s, sok)
		}
	})
}

// FuzzMembers checks that Members sees the keys encoding/json decodes.
// (FoldKey is checked against encoding/json in mcp/paramkeys_test.go.)
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"name":"a","NAME":"b","\u212a":1,"k":2}`))
	f.Add([]byte("{\"\xff\":1,\"\u017f\":2}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ref map[string]json.RawMessage
		if json.Unmarshal(data, &ref) != nil || ref == nil {
			return
		}
		seen := map[string]bool{}
		if err := Members(data, func(k string, v json.RawMessage) bool {
			if !json.Valid(v) {
				t.Fatalf("member %q has invalid JSON %q", k, v)
			}
			seen[k] = true
			return true
		}); err != nil {
			t.Fatalf("Members(%q): %v", data, err)
		}
		if len(seen) != len(ref) {
			t.Fatalf("Members saw %v, encoding/json %v", seen, ref)
		}
		for k := range ref {
			if !seen[k] {
				t.Fatalf("Members missed %q", k)
			}
		}
	})
}

// FuzzEqualFold checks EqualFold against FoldKey, its definition.
func FuzzEqualFold(f *testing.F) {
	f.Add("name", "NAME")
	f.Add("\u212a", "k")
	f.Add("\u017f", "S")
	f.Add("\xff", "\ufffd")
	// An ASCII prefix, then what only the rune walk decides.
	f.Add("io.modelcontextprotocol/\u212aey", "IO.modelcontextprotocol/key")
	f.Add("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo")
	f.Add("name", "names")
	f.Add("a\u017f", "AS")
	f.Fuzz(func(t *testing.T, a, b string) {
		want := FoldKey(a) == FoldKey(b)
		if got := EqualFold(a, b); got != want {
			t.Fatalf("EqualFold(%q, %q) = %v, FoldKey says %v", a, b, got, want)
		}
		if got := EqualFold([]byte(a), b); got != want {
			t.Fatalf("EqualFold([]byte(%q), %q) = %v, FoldKey says %v", a, b, got, want)
		}
	})
}

// FuzzMayHold checks MayHold never says no to valid JSON holding s, in a
// key or a string, as encoding/json decodes them.
func FuzzMayHold(f *testing.F) {
	f.Add([]byte(`{"_meta":{"io.modelcontextprotocol\/clientInfo":{}}}`), "io.modelcontextprotocol/")
	f.Add([]byte(`{"_meta":{"\u0069o.modelcontextprotocol/logLevel":"debug"}}`), "io.modelcontextprotocol/")
	f.Add([]byte(`{"tr\u0061ceparent":"00"}`), "traceparent")
	f.Add([]byte(`{"a":"say \"hi\"\n"}`), "\"hi\"\n")
	f.Add([]byte("{\"a\":\"\xff\"}"), "\uFFFD")
	f.Add([]byte(`{"type":"object"}`), "x-mcp-header")
	f.Fuzz(func(t *testing.T, data []byte, s string) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		if holds(v, s) && !MayHold(data, s) {
			t.Fatalf("MayHold(%q, %q) is false; encoding/json finds it", data, s)
		}
	})
}

// holds reports whether a decoded JSON value has s in a key or a string.
func holds(v any, s string) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, s)
	case []any:
		return slices.ContainsFunc(v, func(e any) bool { return holds(e, s) })
	case map[string]any:
		for k, e := range v {
			if strings.Contains(k, s) || holds(e, s) {
				return true
			}
		}
	}
	return false
}

// FuzzFoldTwins checks FoldTwins against encoding/json's own reading of
// every object's keys: twins found exactly where two keys of one object
// have the same FoldKey, and the two it names are such a pair.
func FuzzFoldTwins(f *testing.F) {
	f.Add([]byte(`{"path":"/srv/docs/a","PATH":"/etc/passwd"}`))
	f.Add([]byte(`{"path":1,"path":2}`))
	f.Add([]byte(`{"a":[{"k":1},{"\u212a":2,"K":3}]}`))
	f.Add([]byte(`{"s":1,"\u017f":2}`))
	f.Add([]byte(`[{"a":1,"b":{"x":1,"y":[1,{"x":2}]}}]`))
	f.Add([]byte(`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"kg":16,"K3":3}`))
	f.Add([]byte(`{"":1,"":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber() // a number past float64 is still JSON
		want := twinsIn(t, d)
		key, other, ok := FoldTwins(data)
		if ok != want {
			t.Fatalf("FoldTwins(%s) = %q, %q, %v; encoding/json's keys say %v", data, key, other, ok, want)
		}
		if ok && FoldKey(key) != FoldKey(other) {
			t.Fatalf("FoldTwins(%s) named %q and %q, which do not fold together", data, key, other)
		}
	})
}

// twinsIn reads one value from d and reports whether an object in it has
// two keys with the same FoldKey.
func twinsIn(t *testing.T, d *json.Decoder) bool {
	tok, err := d.Token()
	if err != nil {
		t.Fatal(err)
	}
	twins := false
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				t.Fatal(err)
			}
			f := FoldKey(k.(string))
			twins = twins || seen[f]
			seen[f] = true
			twins = twinsIn(t, d) || twins
		}
		_, _ = d.Token()
	case json.Delim('['):
		for d.More() {
			twins = twinsIn(t, d) || twins
		}
		_, _ = d.Token()
	}
	return twins
}

// BenchmarkFoldTwins is what an interceptor's check of a call costs: a
// tool call's small params, and a 64 KiB answer of text.
func BenchmarkFoldTwins(b *testing.B) {
	for _, c := range []struct {
		name string
		v    []byte
	}{
		{"params", []byte(`{"name":"search","arguments":{"query":"weather in Paris","limit":10,"filters":{"lang":"en"}},"_meta":{"progressToken":7}}`)},
		{"answer 64 KiB", []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("a", 64<<10) + `"}],"isError":false}`)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.v)))
			for b.Loop() {
				if _, _, ok := FoldTwins(c.v); ok {
					b.Fatal("twins")
				}
			}
		})
	}
}
