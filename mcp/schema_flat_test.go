package mcp

import (
	"encoding/json"
	"testing"
)

// The schemas the raw check reads, and those it leaves to the full
// validator because they say more than it checks.
func TestOnlyAFlatSchemaIsCheckedRaw(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		flat         bool
	}{
		{"an object of typed properties", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`, true},
		{"annotations anywhere", `{"type":"object","title":"T","description":"d","$comment":"c","x-any":1,"properties":{"a":{"type":"boolean","description":"d","default":true,"examples":[false],"x-mcp-header":"A"}}}`, true},
		{"a known draft", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, true},
		{"closed", `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"null"}}}`, true},
		{"no type", `{"properties":{"a":{"type":"string"}}}`, false},
		{"another draft", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, false},
		{"a property without a type", `{"type":"object","properties":{"a":{"description":"anything"}}}`, false},
		{"a type list", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`, false},
		{"an object property", `{"type":"object","properties":{"a":{"type":"object"}}}`, false},
		{"an assertion beside the type", `{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`, false},
		{"a format", `{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`, false},
		{"an enum", `{"type":"object","properties":{"a":{"type":"string","enum":["x"]}}}`, false},
		{"a schema for the other properties", `{"type":"object","additionalProperties":{"type":"string"}}`, false},
		{"a reference", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`, false},
		{"required and not described", `{"type":"object","required":["a"]}`, false},
		{"a top-level assertion", `{"type":"object","minProperties":1}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := flatten(json.RawMessage(tc.schema)) != nil; got != tc.flat {
				t.Errorf("flat = %v, want %v", got, tc.flat)
			}
			if _, err := compileSchema(json.RawMessage(tc.schema)); err != nil {
				t.Fatalf("the schema does not compile: %v", err)
			}
		})
	}
}

// What the raw check accepts and what it leaves to the full validator;
// never does it accept what the full validator refuses.
func TestTheRawCheckVouchesOnlyForValidArguments(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","additionalProperties":false,"required":["s","i"],"properties":{
		"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},"z":{"type":"null"}}}`)
	sch, err := compileSchema(schema)
	if err != nil || sch.flat == nil {
		t.Fatalf("compile: %v, flat %v", err, sch.flat)
	}
	for _, tc := range []struct {
		args       string
		flat, full bool
	}{
		{`{"s":"x","i":1}`, true, true},
		{` { "s" : "x" , "i" : -12 , "n" : 1.5e3 , "b" : false , "z" : null } `, true, true},
		{`{"s":"x","i":1.0}`, false, true}, // an integer written with a fraction: the full validator's call
		{`{"s":"x","i":1e2}`, false, true},
		{`{"s":"x","i":1.5}`, false, false},
		{`{"s":1,"i":1}`, false, false},
		{`{"s":"x"}`, false, false},
		{`{"s":"x","i":1,"other":1}`, false, false},
		{`{"s":"x","i":1,"b":"true"}`, false, false},
		{`{"\u0073":"x","i":1}`, true, true},
		{`{"s":"x","i":1,"s":2}`, false, false}, // the last of a repeated key counts
		{`{"s":"x","i":1`, false, false},
		{`{}`, false, false},
	} {
		t.Run(tc.args, func(t *testing.T) {
			if got := sch.flat.valid(json.RawMessage(tc.args)); got != tc.flat {
				t.Errorf("raw check = %v, want %v", got, tc.flat)
			}
			if got := len(sch.violations(json.RawMessage(tc.args))) == 0; got != tc.full {
				t.Errorf("valid = %v, want %v", got, tc.full)
			}
		})
	}
}

// The raw check of a valid call allocates nothing.
func TestTheRawCheckAllocatesNothing(t *testing.T) {
	sch, _ := compileSchema(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`))
	args := json.RawMessage(`{"text":"hello"}`)
	if n := testing.AllocsPerRun(100, func() {
		if vs := sch.violations(args); vs != nil {
			t.Fatal(vs)
		}
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

// Whatever the schema and arguments, the raw check accepts only what the
// full validator accepts.
func FuzzTheRawCheckAgreesWithTheValidator(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`, `{"a":"x","b":2}`)
	f.Add(`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"number"}}}`, `{"a":-0.5e-3}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"null"},"b":{"type":"boolean"}},"required":["b","a"]}`, `{"a":null,"b":true,"a":1}`)
	f.Add(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"x":{"type":"integer"}}}`, `{"x":10000000000000000000000}`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		sch, err := compileSchema(json.RawMessage(schema))
		if err != nil || sch.flat == nil {
			return
		}
		if sch.flat.valid(json.RawMessage(args)) {
			if vs := validate(sch.full, json.RawMessage(args)); len(vs) > 0 {
				t.Fatalf("the raw check accepted %s against %s; the validator says %v", args, schema, vs)
			}
		}
	})
}
