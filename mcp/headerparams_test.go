// headerparams_test.go pins the x-mcp-header rules (SEP-2243): which
// annotations a tool may carry, and how a call's Mcp-Param headers must
// agree with its arguments.

package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestHeaderParamAnnotationsFollowTheRevisionsRules(t *testing.T) {
	for _, c := range []struct {
		rule   string
		schema string
		want   []HeaderParam
		err    string // a part of the refusal; "" for none
	}{
		{"a schema without annotations has none", `{"type":"object","properties":{"q":{"type":"string"}}}`, nil, ""},
		{"string, integer and boolean parameters may be mirrored",
			`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"},"p":{"type":"integer","x-mcp-header":"Priority"},"v":{"type":"boolean","x-mcp-header":"Verbose"}}}`,
			[]HeaderParam{{"Region", []string{"r"}, "string"}, {"Priority", []string{"p"}, "integer"}, {"Verbose", []string{"v"}, "boolean"}}, ""},
		{"a nested property reached through properties alone may be mirrored",
			`{"type":"object","properties":{"loc":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`,
			[]HeaderParam{{"Zone", []string{"loc", "zone"}, "string"}}, ""},
		{"an annotation whose name is spelled with an escape is an annotation",
			`{"type":"object","properties":{"r":{"type":"string","x-mcp-h\u0065ader":"Region"}}}`,
			[]HeaderParam{{"Region", []string{"r"}, "string"}}, ""},
		{"an x-mcp-header inside an instance value (default, const, enum) is data, not an annotation",
			`{"type":"object","properties":{"o":{"type":"object","default":{"x-mcp-header":"X"}}}}`, nil, ""},
		{"a property named x-mcp-header is a property", `{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, nil, ""},
		{"an empty name is refused", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}`, nil, "not an HTTP header token"},
		{"a space is refused", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`, nil, "not an HTTP header token"},
		{"a colon is refused", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region:Primary"}}}`, nil, "not an HTTP header token"},
		{"a non-ASCII name is refused", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`, nil, "not an HTTP header token"},
		{"a control character is refused", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region\t1"}}}`, nil, "not an HTTP header token"},
		{"a name that is not a string is refused", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":5}}}`, nil, "not a string"},
		{"the same name twice is refused", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"Region"}}}`, nil, "declared twice"},
		{"names equal but for case are refused", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`, nil, "declared twice"},
		{"a number is refused", `{"type":"object","properties":{"s":{"type":"number","x-mcp-header":"Score"}}}`, nil, "not string, integer or boolean"},
		{"an object is refused", `{"type":"object","properties":{"d":{"type":"object","x-mcp-header":"Data"}}}`, nil, "not string, integer or boolean"},
		{"an array is refused", `{"type":"object","properties":{"i":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}`, nil, "not string, integer or boolean"},
		{"null is refused", `{"type":"object","properties":{"n":{"type":"null","x-mcp-header":"Nil"}}}`, nil, "not string, integer or boolean"},
		{"a parameter without a type is refused", `{"type":"object","properties":{"n":{"x-mcp-header":"Nil"}}}`, nil, "not string, integer or boolean"},
		{"the root is refused", `{"type":"object","x-mcp-header":"Root"}`, nil, "not reachable"},
		{"under items is refused", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"z":{"type":"string","x-mcp-header":"Z"}}}}}}`, nil, "not reachable"},
		{"under a composition is refused", `{"type":"object","anyOf":[{"properties":{"z":{"type":"string","x-mcp-header":"Z"}}}]}`, nil, "not reachable"},
		{"under a condition is refused", `{"type":"object","if":{"properties":{"z":{"type":"string","x-mcp-header":"Z"}}}}`, nil, "not reachable"},
		{"under $defs is refused", `{"type":"object","$defs":{"z":{"type":"string","x-mcp-header":"Z"}},"properties":{"z":{"$ref":"#/$defs/z"}}}`, nil, "not reachable"},
		{"under additionalProperties is refused", `{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"Z"}}`, nil, "not reachable"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			got, err := HeaderParams(json.RawMessage(c.schema))
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one saying %q", err, c.err)
			case !reflect.DeepEqual(got, c.want):
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestCallHeadersMustSayWhatTheArgumentsSay(t *testing.T) {
	ps := []HeaderParam{{"Region", []string{"region"}, "string"}, {"Priority", []string{"priority"}, "integer"},
		{"Verbose", []string{"verbose"}, "boolean"}, {"Zone", []string{"loc", "zone"}, "string"}}
	h := func(kv ...string) map[string][]string {
		m := map[string][]string{}
		for i := 0; i < len(kv); i += 2 {
			m[strings.ToLower(kv[i])] = append(m[strings.ToLower(kv[i])], kv[i+1])
		}
		return m
	}
	for _, c := range []struct {
		rule    string
		args    string
		headers map[string][]string
		ok      bool
	}{
		{"no values and no headers agree", `{}`, h(), true},
		{"a plain value matches", `{"region":"us-west1"}`, h("Region", "us-west1"), true},
		{"header names match case-insensitively", `{"region":"us-west1"}`, h("REGION", "us-west1"), true},
		{"values are case-sensitive", `{"region":"us-west1"}`, h("Region", "US-WEST1"), false},
		{"a Base64 value is compared decoded", `{"region":"Hello, 世界"}`, h("Region", "=?base64?SGVsbG8sIOS4lueVjA==?="), true},
		{"Base64 without its padding is refused", `{"region":"Hello"}`, h("Region", "=?base64?SGVsbG8?="), false},
		{"Base64 with characters outside its alphabet is refused", `{"region":"Hello"}`, h("Region", "=?base64?SGVs!!!bG8=?="), false},
		{"a value without the prefix is a literal", `{"region":"SGVsbG8="}`, h("Region", "SGVsbG8="), true},
		{"a value without the suffix is a literal", `{"region":"=?base64?SGVsbG8="}`, h("Region", "=?base64?SGVsbG8="), true},
		{"a literal sentinel must match as sent", `{"region":"Hello"}`, h("Region", "=?base64?SGVsbG8="), false},
		{"a raw non-ASCII header value is refused", `{"region":"é"}`, h("Region", "é"), false},
		{"a control character in the header is refused", `{"region":"a\u0001b"}`, h("Region", "a\x01b"), false},
		{"a value in the body needs its header", `{"region":"us-west1"}`, h(), false},
		{"a header needs its value in the body", `{}`, h("Region", "us-west1"), false},
		{"a null value needs no header", `{"region":null}`, h(), true},
		{"a header sent twice is refused", `{"region":"a"}`, h("Region", "a", "Region", "a"), false},
		{"integers are compared as numbers", `{"priority":42.0}`, h("Priority", "42"), true},
		{"a different integer is refused", `{"priority":42}`, h("Priority", "43"), false},
		{"a boolean is lower-case true or false", `{"verbose":true}`, h("Verbose", "true"), true},
		{"a boolean in another spelling is refused", `{"verbose":true}`, h("Verbose", "TRUE"), false},
		{"a nested value is read at its path", `{"loc":{"zone":"b"}}`, h("Zone", "b"), true},
		{"a nested value must match too", `{"loc":{"zone":"b"}}`, h("Zone", "c"), false},
	} {
		t.Run(c.rule, func(t *testing.T) {
			msg := checkHeaderParams(ps, json.RawMessage(c.args), c.headers)
			if (msg == "") != c.ok {
				t.Fatalf("check said %q, want ok=%v", msg, c.ok)
			}
		})
	}
}

// FuzzHeaderParams: any schema is read or refused without a panic, and
// what is read names tokens on primitive types, unique but for case.
func FuzzHeaderParams(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`,
		`{"properties":{"a":{"properties":{"b":{"type":"integer","x-mcp-header":"B"}}}}}`,
		`{"anyOf":[{"x-mcp-header":"A"}]}`, `[{"x-mcp-header":1}]`, `{"x-mcp-header":"x"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		ps, err := HeaderParams(json.RawMessage(s))
		if err != nil {
			return
		}
		for i, p := range ps {
			if !isToken(p.Name) || len(p.Path) == 0 || (p.Type != "string" && p.Type != "integer" && p.Type != "boolean") {
				t.Fatalf("read %+v from %s", p, s)
			}
			for _, q := range ps[:i] {
				if strings.EqualFold(p.Name, q.Name) {
					t.Fatalf("two names %q %q from %s", p.Name, q.Name, s)
				}
			}
		}
	})
}

// FuzzDecodeParamHeader: a header value decodes or is refused, and a
// value that needs no encoding reads as itself.
func FuzzDecodeParamHeader(f *testing.F) {
	for _, s := range []string{"us-west1", "=?base64?SGVsbG8=?=", "=?base64?SGVsbG8?=", "=?base64?", "?=", "a\tb", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := decodeParamHeader(s)
		if ok && !strings.HasPrefix(s, "=?base64?") && v != s {
			t.Fatalf("%q read as %q", s, v)
		}
	})
}
