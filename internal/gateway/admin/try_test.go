package admin

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The form follows the schema: an input per property, in its order, of
// the kind its type asks for; raw JSON for the rest.
func TestTheFormFollowsTheSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"q":{"type":"string","description":"What to look for"},
		"sort":{"type":"string","enum":["new","old"]},
		"limit":{"type":"integer"},
		"all":{"type":"boolean"},
		"tags":{"type":"array","items":{"type":"string"}},
		"ids":{"type":"array","items":{"type":"integer"}},
		"filter":{"type":"object"}},"required":["q"]}`)
	got := formFields(schema)
	var kinds []string
	for _, f := range got {
		kinds = append(kinds, f.Name+":"+f.Kind)
	}
	if want := "q:text sort:select limit:number all:checkbox tags:lines ids:lines filter:json"; strings.Join(kinds, " ") != want {
		t.Errorf("fields %s, want %s", strings.Join(kinds, " "), want)
	}
	if !got[0].Required || got[1].Required || got[0].Description != "What to look for" || !reflect.DeepEqual(got[1].Options, []string{"new", "old"}) {
		t.Errorf("fields %+v", got)
	}
	for i, v := range []string{"x \"y\"", "old", "10", "on", "a\nb", "1\n2", `{"k":[1]}`} {
		got[i].Value = v
	}
	args, err := arguments(got)
	if want := `{"q":"x \"y\"","sort":"old","limit":10,"all":true,"tags":["a","b"],"ids":[1,2],"filter":{"k":[1]}}`; err != nil || string(args) != want {
		t.Errorf("arguments = %s, %v; want %s", args, err, want)
	}
	got[2].Value = "ten"
	if _, err := arguments(got); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a number that is none: %v", err)
	}
	for i := range got {
		got[i].Value = ""
	}
	if args, _ := arguments(got); string(args) != "{}" {
		t.Errorf("nothing filled in: %s", args)
	}
}

// An answer is shown as a client shows it: text, images drawn (a data
// URL only for an image of base64), an error with its code and data.
func TestAnAnswerIsShownAsAClientShowsIt(t *testing.T) {
	r := shown(json.RawMessage(`{"content":[{"type":"text","text":"hi\u200b"},{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="},
		{"type":"image","mimeType":"text/html","data":"PGI+"},{"type":"resource","resource":{"uri":"x://a","text":"t"}}],"isError":true,"structuredContent":{"n":1}}`), nil)
	if !r.IsError || len(r.Texts) != 1 || r.Texts[0] != "hi⟨U+200B⟩" || len(r.Images) != 1 || string(r.Images[0]) != "data:image/png;base64,iVBORw0KGgo=" ||
		len(r.Others) != 2 || len(r.StructuredContent) == 0 {
		t.Errorf("shown = %+v", r)
	}
	e := shown(nil, jsonrpc.NewError(-32602, "invalid params: argument \"region\" may not be set", map[string]any{"arguments": []string{"region"}}))
	if e.Error != `-32602 invalid params: argument "region" may not be set` || !strings.Contains(strings.Join(e.ErrorData, "\n"), `"region"`) {
		t.Errorf("an error shown as %+v", e)
	}
	if e := shown(nil, errors.New("no store")); e.Error != "no store" {
		t.Errorf("a failure shown as %+v", e)
	}
}
