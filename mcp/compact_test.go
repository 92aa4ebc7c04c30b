package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpgate/mcpgate/mcp"
)

// A schema with prose at every depth, and properties named like the
// keywords that go.
const proseSchema = `{"type":"object","title":"Search","description":"Searches the index.","$comment":"v2",
"properties":{"description":{"type":"string","description":"the text to find","minLength":1,"examples":["cat"]},
"title":{"type":"string","enum":["a","b"],"title":"T"},
"limit":{"type":"integer","minimum":1,"maximum":100,"default":10,"description":"how many"},
"when":{"type":"string","format":"date-time"},
"kind":{"const":"x","description":"always x"},
"tags":{"type":"array","items":{"type":"string","description":"a tag","pattern":"^[a-z]+$"},"maxItems":5},
"pair":{"type":"array","prefixItems":[{"type":"integer","description":"first"},{"type":"string"}]},
"either":{"anyOf":[{"type":"string","description":"s"},{"$ref":"#/$defs/n"}]}},
"$defs":{"n":{"type":"number","exclusiveMinimum":0,"description":"positive"}},
"required":["description","limit"],"additionalProperties":false}`

const proseSchemaCompact = `{"type":"object",` +
	`"properties":{"description":{"type":"string","minLength":1},` +
	`"title":{"type":"string","enum":["a","b"]},` +
	`"limit":{"type":"integer","minimum":1,"maximum":100,"default":10},` +
	`"when":{"type":"string","format":"date-time"},` +
	`"kind":{"const":"x"},` +
	`"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"},"maxItems":5},` +
	`"pair":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}]},` +
	`"either":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/n"}]}},` +
	`"$defs":{"n":{"type":"number","exclusiveMinimum":0}},` +
	`"required":["description","limit"],"additionalProperties":false}`

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCompactSchemaDropsProseAndKeepsEveryCheck(t *testing.T) {
	got := string(mcp.CompactSchema(json.RawMessage(compact(t, proseSchema))))
	if got != proseSchemaCompact {
		t.Fatalf("compacted:\n%s\nwant:\n%s", got, proseSchemaCompact)
	}
	// The same instances are valid, and the same invalid, in both views.
	full, small := compileFor(t, compact(t, proseSchema)), compileFor(t, got)
	for _, inst := range []string{
		`{"description":"cat","limit":3}`, `{"description":"","limit":3}`, `{"description":"cat"}`,
		`{"description":"cat","limit":0}`, `{"description":"cat","limit":3,"title":"c"}`, `{"description":"cat","limit":3,"kind":"y"}`,
		`{"description":"cat","limit":3,"tags":["A"]}`, `{"description":"cat","limit":3,"tags":["a","b","c","d","e","f"]}`,
		`{"description":"cat","limit":3,"pair":[1,"x"]}`, `{"description":"cat","limit":3,"pair":["x",1]}`,
		`{"description":"cat","limit":3,"either":-1}`, `{"description":"cat","limit":3,"either":2}`, `{"description":"cat","limit":3,"other":1}`,
	} {
		var v any
		_ = json.Unmarshal([]byte(inst), &v)
		if a, b := full.Validate(v) == nil, small.Validate(v) == nil; a != b {
			t.Errorf("%s: valid %v in the full view, %v in the compact one", inst, a, b)
		}
	}
	for _, s := range []string{`true`, `false`, `{}`, `{"type":"string"}`, `not json`} {
		if got := string(mcp.CompactSchema(json.RawMessage(s))); got != s {
			t.Errorf("CompactSchema(%s) = %s, want it as it was", s, got)
		}
	}
}

func compileFor(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(schema)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	c.AssertFormat()
	s, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzCompactSchema: any JSON compacts to JSON, a second compaction
// changes nothing, and what is not prose survives (the output is never
// longer than the input).
func FuzzCompactSchema(f *testing.F) {
	f.Add(proseSchema)
	f.Add(`{"properties":{"a":{"description":1}},"items":[{"title":"x"}],"not":{"$comment":"c"}}`)
	f.Add(`{"\u0074itle":"escaped","type":"string"}`)
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		once := mcp.CompactSchema(json.RawMessage(s))
		if !json.Valid(once) {
			t.Fatalf("CompactSchema(%s) = %s, not JSON", s, once)
		}
		if twice := mcp.CompactSchema(once); !bytes.Equal(once, twice) {
			t.Fatalf("a second compaction of %s changed %s into %s", s, once, twice)
		}
	})
}

// The full view is each entry as defined, byte for byte; the compact view
// gives the short description (or the full one when there is none) and
// the compacted schema, for tools, prompts and resources alike; a call is
// checked against the same schema in both.
func TestTheCompactViewAndTheUnchangedFullView(t *testing.T) {
	s := newServer(t, mcp.Options{})
	def := json.RawMessage(`{"name":"search","description":"Searches the whole index, slowly, with every option explained at length.","inputSchema":` + compact(t, proseSchema) + `,"annotations":{"readOnlyHint":true}}`)
	if err := s.AddTools(
		&mcp.Tool{Name: "search", Definition: def, Short: "Search the index.", SkipValidation: true, Handler: okCompactTool},
		&mcp.Tool{Name: "plain", Description: "No short text.", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"query"}},"required":["q"]}`), Handler: okCompactTool},
	); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPrompts(&mcp.Prompt{Name: "p", Description: "A long prompt description.", Short: "A prompt.",
		Arguments: []mcp.PromptArgument{{Name: "x", Description: "the x", Required: true}}, Get: noPrompt}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResources(&mcp.Resource{URI: "file:///r", Name: "r", Description: "A long resource description.", Short: "A resource.", Read: noRead}); err != nil {
		t.Fatal(err)
	}
	ss, _ := readySession(t, s)
	list := func(view mcp.View, method string) string {
		t.Helper()
		id := []byte(`7`)
		ans := ss.Handle(mcp.WithIdentity(context.Background(), mcp.Identity{View: view}), request(t, id, method, ""), newRecorder())
		return string(result(t, mustParse(t, ans)))
	}
	full := list(mcp.ViewFull, "tools/list")
	plainDef := `{"name":"plain","description":"No short text.","inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"query"}},"required":["q"]}}`
	if want := `{"tools":[` + string(def) + `,` + plainDef + `]}`; full != want {
		t.Fatalf("the full view changed:\n%s\nwant:\n%s", full, want)
	}
	if got := list(mcp.ViewFull, "tools/list"); got != full {
		t.Error("the full view is not the same twice")
	}
	small := list(mcp.ViewCompact, "tools/list")
	want := `{"tools":[{"name":"search","description":"Search the index.","inputSchema":` + proseSchemaCompact + `,"annotations":{"readOnlyHint":true}},` +
		`{"name":"plain","description":"No short text.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}]}`
	if small != want {
		t.Errorf("the compact view:\n%s\nwant:\n%s", small, want)
	}
	if got := list(mcp.ViewCompact, "prompts/list"); got != `{"prompts":[{"name":"p","description":"A prompt.","arguments":[{"name":"x","required":true}]}]}` {
		t.Errorf("prompts in the compact view: %s", got)
	}
	if got := list(mcp.ViewCompact, "resources/list"); got != `{"resources":[{"uri":"file:///r","name":"r","description":"A resource."}]}` {
		t.Errorf("resources in the compact view: %s", got)
	}
	// The same call is refused the same way in either view: the schema a
	// call is checked against is the full one.
	for _, v := range []mcp.View{mcp.ViewFull, mcp.ViewCompact} {
		ans := mustParse(t, ss.Handle(mcp.WithIdentity(context.Background(), mcp.Identity{View: v}), request(t, []byte(`8`), "tools/call", `{"name":"plain","arguments":{}}`), newRecorder()))
		if ans.Error == nil {
			t.Errorf("view %d: a call without q was not refused", v)
		}
	}
}

func okCompactTool(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"content":[]}`), nil
}

// The search view lists the search mode's tools and the pinned ones;
// the other views never list the search mode's; CallTool serves the
// inner tool as a tools/call for it — the gate and the observers see its
// name — on a session and on the stateless path alike.
func TestTheSearchViewAndCallTool(t *testing.T) {
	var seen []string
	obs := observerFunc(func(r *mcp.Request) {
		if n, ok := r.EntryName(); ok {
			seen = append(seen, n)
		}
	})
	s := newServer(t, mcp.Options{Observers: []mcp.Observer{obs}, Pinned: func(n string) bool { return n == "pinned" }})
	echo := func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(args))}})
	}
	if err := s.AddTools(
		&mcp.Tool{Name: "finder", Search: true, Handler: func(ctx context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			return r.CallTool(ctx, "other", json.RawMessage(`{"x":1}`))
		}},
		&mcp.Tool{Name: "pinned", Handler: echo},
		&mcp.Tool{Name: "other", Handler: echo},
	); err != nil {
		t.Fatal(err)
	}
	ss, _ := readySession(t, s)
	names := func(view mcp.View) string {
		ans := mustParse(t, ss.Handle(mcp.WithIdentity(context.Background(), mcp.Identity{View: view}), request(t, []byte(`5`), "tools/list", ""), newRecorder()))
		var page struct{ Tools []struct{ Name string } }
		_ = json.Unmarshal(result(t, ans), &page)
		var out []string
		for _, x := range page.Tools {
			out = append(out, x.Name)
		}
		return strings.Join(out, " ")
	}
	for view, want := range map[mcp.View]string{mcp.ViewFull: "pinned other", mcp.ViewCompact: "pinned other", mcp.ViewSearch: "finder pinned"} {
		if got := names(view); got != want {
			t.Errorf("view %d lists %q, want %q", view, got, want)
		}
	}
	if got := s.SearchableTools(context.Background()); len(got) != 2 || got[0].Name != "pinned" || got[1].Name != "other" {
		t.Errorf("SearchableTools: %+v", got)
	}
	seen = nil
	ans := mustParse(t, ss.Handle(context.Background(), request(t, []byte(`6`), "tools/call", `{"name":"finder","arguments":{}}`), newRecorder()))
	if !strings.Contains(string(result(t, ans)), `{\"x\":1}`) || strings.Join(seen, " ") != "finder other" {
		t.Errorf("the inner call on a session: %s, observed %q", ans.Result, seen)
	}
	seen = nil
	raw := s.ServeStateless(context.Background(), request(t, []byte(`7`), "tools/call", `{"name":"finder","arguments":{}}`), mcp.Version20250326, nil)
	if !strings.Contains(string(raw), `{\"x\":1}`) || strings.Join(seen, " ") != "finder other" {
		t.Errorf("the inner call stateless: %s, observed %q", raw, seen)
	}
}

// observerFunc sees each request begin.
type observerFunc func(*mcp.Request)

func (f observerFunc) Begin(ctx context.Context, r *mcp.Request) context.Context { f(r); return ctx }
func (f observerFunc) End(context.Context, *mcp.Request, mcp.End)                {}
