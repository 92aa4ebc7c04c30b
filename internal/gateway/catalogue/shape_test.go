package catalogue_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// searchDef is a tool with the keywords shaping must keep: a $ref, an
// enum, additionalProperties, unknown members, and odd spacing.
const searchDef = `{"name":"search_issues","description":"Search any repository.","title":"Search",
 "annotations":{"destructiveHint":false, "vendor/x": 1},
 "inputSchema":{"type":"object", "$defs":{"login":{"type":"string","pattern":"^[a-z-]+$"}},
  "properties":{"owner":{"$ref":"#/$defs/login"}, "q":{"type":"string"},
   "per_page":{"type":"integer","maximum":100}, "debug":{"type":"boolean"}},
  "required":["owner", "q"], "additionalProperties":false, "x-keep":  [1, 2]}}`

// shapingBackend serves search_issues (answering with the arguments it
// got), delete_repo, delete_org, and a prompt draft with two arguments.
func shapingBackend(t *testing.T) (*mcp.Server, chan json.RawMessage) {
	t.Helper()
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "gh", Version: "1"}})
	got := make(chan json.RawMessage, 8)
	text := func(s string) (json.RawMessage, error) {
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(s)}})
	}
	seen := func(_ context.Context, r *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
		name, _ := jsonrpc.LookupString(r.Params, "name")
		got <- json.RawMessage(name + " " + string(args))
		return text("ok")
	}
	must(t, s.AddTools(
		&mcp.Tool{Name: "search_issues", Definition: json.RawMessage(searchDef), SkipValidation: true, Handler: seen},
		&mcp.Tool{Name: "delete_repo", Handler: seen},
		&mcp.Tool{Name: "delete_org", Handler: seen},
		&mcp.Tool{Name: "whoami", Handler: seen},
	))
	must(t, s.AddPrompts(&mcp.Prompt{Name: "draft", Description: "Draft anything.",
		Arguments: []mcp.PromptArgument{{Name: "tone", Required: true}, {Name: "topic"}},
		Get: func(_ context.Context, _ *mcp.Request, args map[string]string) (json.RawMessage, error) {
			return json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"` + args["tone"] + ` ` + args["topic"] + `"}}]}`), nil
		}}))
	return s, got
}

func ghShapes() catalogue.Shapes {
	return catalogue.Shapes{
		Tools: []catalogue.Shape{
			{Key: "backends[0].tools[0]", Name: "delete_*", Hide: true},
			{Key: "backends[0].tools[1]", Name: "search_issues", Rename: "find_issues", Description: "Search issues in our repos.",
				Title: "Find issues", Annotations: json.RawMessage(`{"readOnlyHint":true,"destructiveHint":true}`),
				Fixed:    map[string]json.RawMessage{"owner": json.RawMessage(`"our-org"`)},
				Defaults: map[string]json.RawMessage{"per_page": json.RawMessage(`20`)},
				HideArgs: []string{"debug"}},
		},
		Prompts: []catalogue.Shape{
			{Key: "backends[0].prompts[0]", Name: "draft", Rename: "write", Description: "Write a reply.",
				Fixed: map[string]json.RawMessage{"tone": json.RawMessage(`"formal"`)}},
		},
	}
}

func shaped(t *testing.T, shapes catalogue.Shapes, log *logBuffer) (*front, chan json.RawMessage) {
	t.Helper()
	s, got := shapingBackend(t)
	f := newFront(t)
	opts := catalogue.Options{Shapes: shapes}
	if log != nil {
		opts.Logger = log.logger()
	}
	must(t, catalogue.New("gh", connect(t, s), opts).Sync(context.Background(), f.Server))
	return f, got
}

// Listing shows the shaped tool: hidden ones gone, the new name (after
// the prefix), description, title and merged annotations, and the schema
// without the fixed and hidden arguments, with the default set; every
// other keyword byte for byte.
func TestAShapedToolIsListedAsShaped(t *testing.T) {
	f, _ := shaped(t, ghShapes(), nil)
	tools := f.list(t, "tools/list", "tools")
	if got, want := names(tools, "name"), []string{"gh__find_issues", "gh__whoami"}; !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v (delete_* hidden, search_issues renamed)", got, want)
	}
	var def map[string]json.RawMessage
	must(t, json.Unmarshal(tools[0], &def))
	for member, want := range map[string]string{
		"description": `"Search issues in our repos."`,
		"title":       `"Find issues"`,
		"annotations": `{"readOnlyHint":true,"destructiveHint":true, "vendor/x": 1}`,
	} {
		if got := string(def[member]); got != want {
			t.Errorf("%s = %s, want %s", member, got, want)
		}
	}
	var schema map[string]json.RawMessage
	must(t, json.Unmarshal(def["inputSchema"], &schema))
	for member, want := range map[string]string{
		"properties":           `{"q":{"type":"string"},"per_page":{"default":20,"type":"integer","maximum":100}}`,
		"required":             `["q"]`,
		"$defs":                `{"login":{"type":"string","pattern":"^[a-z-]+$"}}`,
		"additionalProperties": `false`,
		"x-keep":               `[1, 2]`,
	} {
		if got := string(schema[member]); got != want {
			t.Errorf("inputSchema.%s = %s, want %s", member, got, want)
		}
	}
	prompts := f.list(t, "prompts/list", "prompts")
	if got := string(prompts[0]); !strings.Contains(got, `"name":"gh__write"`) || !strings.Contains(got, `"description":"Write a reply."`) ||
		strings.Contains(got, `"tone"`) || !strings.Contains(got, `"topic"`) {
		t.Errorf("shaped prompt %s: want renamed, described anew, tone gone and topic kept", got)
	}
}

// A call is turned back into the backend's exactly once: its own name,
// the fixed value set, the default filled in where left out.
func TestAShapedCallReachesTheBackendAsItsOwn(t *testing.T) {
	f, got := shaped(t, ghShapes(), nil)
	f.result(t, "tools/call", `{"name":"gh__find_issues","arguments":{"q":"bug"}}`)
	if g, want := string(<-got), `search_issues {"per_page":20,"owner":"our-org","q":"bug"}`; g != want {
		t.Errorf("backend got %s, want %s", g, want)
	}
	f.result(t, "tools/call", `{"name":"gh__find_issues","arguments":{"q":"bug","per_page":5}}`)
	if g, want := string(<-got), `search_issues {"owner":"our-org","q":"bug","per_page":5}`; g != want {
		t.Errorf("backend got %s, want %s (a caller's value is kept over the default)", g, want)
	}
	// Under a key a case-insensitive decoder reads as per_page: a default
	// added beside it would be read instead, before or after it by decoder.
	f.result(t, "tools/call", `{"name":"gh__find_issues","arguments":{"q":"bug","PER_PAGE":5}}`)
	if g, want := string(<-got), `search_issues {"owner":"our-org","q":"bug","PER_PAGE":5}`; g != want {
		t.Errorf("backend got %s, want %s (a caller's value is kept over the default)", g, want)
	}
	res := f.result(t, "prompts/get", `{"name":"gh__write","arguments":{"topic":"rain"}}`)
	if !strings.Contains(string(res), `formal rain`) {
		t.Errorf("prompt answered %s, want the fixed tone sent", res)
	}
}

// A caller's value for a fixed or hidden argument is refused with -32602
// naming it, never silently overwritten; a hidden tool is not callable.
func TestAFixedOrHiddenArgumentFromTheCallerIsRefused(t *testing.T) {
	f, got := shaped(t, ghShapes(), nil)
	for _, tc := range []struct{ args, names string }{
		{`{"q":"x","owner":"evil"}`, `"owner"`},
		{`{"q":"x","debug":true}`, `"debug"`},
		{`{"q":"x","debug":true,"owner":"evil"}`, `"debug", "owner"`},
		// A key a case-insensitive decoder (Go's encoding/json, which many
		// MCP servers use) takes for one, or one spelled with an escape.
		{`{"q":"x","OWNER":"evil"}`, `"owner"`},
		{`{"q":"x","Debug":true}`, `"debug"`},
		{`{"q":"x","deb\u0075g":true}`, `"debug"`},
	} {
		m := f.call(t, "tools/call", `{"name":"gh__find_issues","arguments":`+tc.args+`}`)
		var e jsonrpc.Error
		if m.Kind() != jsonrpc.KindError || json.Unmarshal(m.Error, &e) != nil || e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, tc.names) {
			t.Errorf("arguments %s answered %s, want -32602 naming %s", tc.args, m.Error, tc.names)
		}
	}
	m := f.call(t, "prompts/get", `{"name":"gh__write","arguments":{"tone":"rude"}}`)
	if m.Kind() != jsonrpc.KindError || !strings.Contains(string(m.Error), `-32602`) {
		t.Errorf("a fixed prompt argument from the caller answered %s", m.Error)
	}
	for _, name := range []string{"gh__delete_repo", "gh__search_issues"} {
		if m := f.call(t, "tools/call", `{"name":"`+name+`","arguments":{}}`); m.Kind() != jsonrpc.KindError {
			t.Errorf("%s (hidden, or under its old name) answered %s", name, m.Result)
		}
	}
	select {
	case g := <-got:
		t.Fatalf("the backend was called with %s", g)
	default:
	}
}

// A rule that cannot be applied withholds its entry and says which rule;
// a rule that matches nothing is said too.
func TestAShapingRuleThatCannotApplyIsAnErrorNamingIt(t *testing.T) {
	var log logBuffer
	shapes := catalogue.Shapes{Tools: []catalogue.Shape{
		{Key: "backends[0].tools[0]", Name: "search_issues", Fixed: map[string]json.RawMessage{"owner": json.RawMessage(`"Not A Login"`)}},
		{Key: "backends[0].tools[1]", Name: "whoami", Defaults: map[string]json.RawMessage{"nope": json.RawMessage(`1`)}},
		{Key: "backends[0].tools[2]", Name: "gone_*", Hide: true},
	}}
	f, _ := shaped(t, shapes, &log)
	if got := names(f.list(t, "tools/list", "tools"), "name"); !slices.Equal(got, []string{"gh__delete_repo", "gh__delete_org"}) {
		t.Errorf("listed %v: a tool whose rule cannot apply is withheld, not served unshaped", got)
	}
	out := log.String()
	if strings.Contains(out, "Not A Login") {
		t.Errorf("the log tells a fixed value (it may be a credential):\n%s", out)
	}
	for _, want := range []string{
		`backends[0].tools[0]: arguments.fixed.owner: the fixed value does not validate against the argument's schema (at /owner)`,
		`backends[0].tools[1]: arguments.defaults.nope: the tool has no argument`,
		`rule=backends[0].tools[2]`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// A rename onto a name another backend serves is withheld and said, not
// renamed again.
func TestARenameOntoAnotherBackendsEntryIsWithheld(t *testing.T) {
	var log logBuffer
	s1, _ := shapingBackend(t)
	s2, _ := shapingBackend(t)
	f := newFront(t)
	claims := catalogue.NewClaims()
	must(t, catalogue.New("a", connect(t, s1), catalogue.Options{Prefix: catalogue.NoPrefix, Claims: claims}).Sync(context.Background(), f.Server))
	b := catalogue.New("b", connect(t, s2), catalogue.Options{Prefix: catalogue.NoPrefix, Claims: claims, Logger: log.logger(),
		Shapes: catalogue.Shapes{Tools: []catalogue.Shape{{Key: "backends[1].tools[0]", Name: "delete_repo", Rename: "whoami"}}}})
	must(t, b.Sync(context.Background(), f.Server))
	if !strings.Contains(log.String(), "rule=backends[1].tools[0]") {
		t.Errorf("log does not name the rule:\n%s", log.String())
	}
	for _, name := range names(f.list(t, "tools/list", "tools"), "name") {
		if name == "b__whoami" {
			t.Errorf("the rename was renamed again: %s", name)
		}
	}
}
