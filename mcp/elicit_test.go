package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// An accepted form answer gets the schema's default for each field it
// omits, in the schema's order, after the fields it has; nothing else of
// the answer changes, and only accepted form answers are touched.
func TestElicitationAnswersGetTheDefaultsTheyOmit(t *testing.T) {
	const schema = `{"type":"object","properties":{` +
		`"name":{"type":"string","default":"John Doe"},` +
		`"age":{"type":"integer","default":30},` +
		`"note":{"type":"string"},` +
		`"score":{"type":"number","default":95.50},` +
		`"status":{"type":"string","enum":["active","inactive"],"default":"active"},` +
		`"verified":{"type":"boolean","default":true},` +
		`"we\"ird":{"type":"string","default":"x"}}}`
	form := `{"message":"m","requestedSchema":` + schema + `}`
	for _, tc := range []struct {
		rule, params, result, want string
	}{
		{"an empty accepted content gets every default", form,
			`{"action":"accept","content":{}}`,
			`{"action":"accept","content":{"name":"John Doe","age":30,"score":95.50,"status":"active","verified":true,"we\"ird":"x"}}`},
		{"a given value is kept, even one equal to nothing", form,
			`{"action":"accept", "content": {"name":"Ann", "verified":false, "age":null} ,"_meta":{"k":1}}`,
			`{"action":"accept", "content": {"name":"Ann", "verified":false, "age":null,"score":95.50,"status":"active","we\"ird":"x"} ,"_meta":{"k":1}}`},
		{"an accepted answer without content gets one", form,
			`{"action":"accept"}`,
			`{"action":"accept","content":{"name":"John Doe","age":30,"score":95.50,"status":"active","verified":true,"we\"ird":"x"}}`},
		{"an explicit form mode is a form", `{"mode":"form","message":"m","requestedSchema":{"properties":{"a":{"default":1}}}}`,
			`{"action":"accept","content":{"b":2}}`, `{"action":"accept","content":{"b":2,"a":1}}`},
		{"a declined answer is left alone", form, `{"action":"decline"}`, `{"action":"decline"}`},
		{"a cancelled answer is left alone", form, `{"action":"cancel","content":{}}`, `{"action":"cancel","content":{}}`},
		{"a URL-mode request has no schema to apply", `{"mode":"url","message":"m","url":"https://x","elicitationId":"1","requestedSchema":{"properties":{"a":{"default":1}}}}`,
			`{"action":"accept","content":{}}`, `{"action":"accept","content":{}}`},
		{"a content that is not an object is left alone", form, `{"action":"accept","content":[1]}`, `{"action":"accept","content":[1]}`},
		{"a schema without defaults changes nothing", `{"message":"m","requestedSchema":{"properties":{"a":{"type":"string"}}}}`,
			`{"action":"accept","content":{}}`, `{"action":"accept","content":{}}`},
		{"a request without a schema changes nothing", `{"message":"m"}`, `{"action":"accept","content":{}}`, `{"action":"accept","content":{}}`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := mcp.ElicitationDefaults(json.RawMessage(tc.params), json.RawMessage(tc.result))
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
}

// The answer's bytes are not copied when there is nothing to add.
func TestElicitationDefaultsKeepAnAnswerWithNothingToAdd(t *testing.T) {
	result := json.RawMessage(`{"action":"accept","content":{"a":1}}`)
	got := mcp.ElicitationDefaults(json.RawMessage(`{"requestedSchema":{"properties":{"a":{"default":2}}}}`), result)
	if &got[0] != &result[0] {
		t.Error("the answer was copied")
	}
}

// Whatever the client answers, the result is JSON when the input is.
func FuzzElicitationDefaults(f *testing.F) {
	f.Add(`{"requestedSchema":{"properties":{"a":{"default":1}}}}`, `{"action":"accept","content":{}}`)
	f.Add(`{"requestedSchema":{"properties":{"a":{"default":"x"},"b":{"default":[1]}}}}`, `{"action":"accept"}`)
	f.Add(`{"mode":"form","requestedSchema":{"properties":{}}}`, ` { "action" : "accept" , "content" : { "b" : 1 } } `)
	f.Fuzz(func(t *testing.T, params, result string) {
		if !json.Valid([]byte(params)) || !json.Valid([]byte(result)) {
			return
		}
		got := mcp.ElicitationDefaults(json.RawMessage(params), json.RawMessage(result))
		if !json.Valid(got) {
			t.Fatalf("%s + %s gave %s", params, result, got)
		}
	})
}
