package jsonrpc

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParseRules(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		code     int64 // 0: valid
		kind     Kind
		answerID string // id the error answer must carry ("" for null)
	}{
		{"request with number id", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, 0, KindRequest, ""},
		{"request with string id", `{"jsonrpc":"2.0","id":"a-1","method":"ping"}`, 0, KindRequest, ""},
		{"notification has no id", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, KindNotification, ""},
		{"result response", `{"jsonrpc":"2.0","id":1,"result":{}}`, 0, KindResult, ""},
		{"error response", `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`, 0, KindError, ""},
		{"error response with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, 0, KindError, ""},
		{"null id is invalid, not a notification", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, 0, ""},
		{"boolean id is invalid", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, 0, ""},
		{"object id is invalid", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest, 0, ""},
		{"missing jsonrpc version", `{"id":1,"method":"ping"}`, CodeInvalidRequest, 0, "1"},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, 0, "1"},
		{"method must be a string", `{"jsonrpc":"2.0","id":1,"method":3}`, CodeInvalidRequest, 0, "1"},
		{"method must not be empty", `{"jsonrpc":"2.0","id":1,"method":""}`, CodeInvalidRequest, 0, "1"},
		{"params must be structured", `{"jsonrpc":"2.0","id":1,"method":"ping","params":3}`, CodeInvalidRequest, 0, "1"},
		{"request cannot carry result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, CodeInvalidRequest, 0, "1"},
		{"response cannot carry both", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`, CodeInvalidRequest, 0, "1"},
		{"empty object", `{}`, CodeInvalidRequest, 0, ""},
		{"not an object", `"ping"`, CodeInvalidRequest, 0, ""},
		{"truncated JSON is a parse error", `{"jsonrpc":"2.0","id":1,"method":"pi`, CodeParseError, 0, ""},
		{"trailing garbage is a parse error", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, CodeParseError, 0, ""},
		{"parse error wins over envelope errors", `{"id":null,"method":1,,}`, CodeParseError, 0, ""},
		{"empty input is a parse error", ``, CodeParseError, 0, ""},
		{"escaped key is understood", `{"jsonrpc":"2.0","\u0069d":5,"method":"ping"}`, 0, KindRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.in))
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if m.Kind() != tt.kind {
					t.Fatalf("kind = %v, want %v", m.Kind(), tt.kind)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ParseError", err)
			}
			if pe.Code != tt.code {
				t.Fatalf("code = %d, want %d (%s)", pe.Code, tt.code, pe.Message)
			}
			if string(pe.ID) != tt.answerID {
				t.Fatalf("answer id = %q, want %q", pe.ID, tt.answerID)
			}
			var resp struct {
				ID    json.RawMessage      `json:"id"`
				Error struct{ Code int64 } `json:"error"`
			}
			if err := json.Unmarshal(pe.Response(), &resp); err != nil {
				t.Fatalf("error answer is not JSON: %s", pe.Response())
			}
			if resp.Error.Code != tt.code {
				t.Fatalf("answer code = %d", resp.Error.Code)
			}
			if tt.answerID == "" && string(resp.ID) != "null" {
				t.Fatalf("answer id = %s, want null", resp.ID)
			}
		})
	}
}

// The envelope keeps payloads as the bytes they arrived as: unknown fields,
// _meta and integers beyond float64 are untouched, and writing the message
// back reproduces them.
func TestPayloadsStayRaw(t *testing.T) {
	result := `{ "content" : [ {"type":"text","text":"hi"} ], "isError":false,
		"structuredContent":{"big":123456789012345678901234567890,"f":1.000000000000000000001},
		"_meta":{"x":[1,2,3]}, "unknownField":{"nested":"\u00e9"} }`
	in := `{"jsonrpc":"2.0","id":"req-1","result":` + result + `}`
	m, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Result) != result {
		t.Fatalf("result changed:\n got %s\nwant %s", m.Result, result)
	}
	out := AppendResult(nil, m.ID, m.Result)
	m2, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(m2.Result) != result || string(m2.ID) != `"req-1"` {
		t.Fatalf("round trip changed the payload: %s", out)
	}

	rawErr := `{"code":-32099,"message":"custom","data":{"n":98765432109876543210},"extra":true}`
	em, err := Parse([]byte(`{"jsonrpc":"2.0","id":3,"error":` + rawErr + `}`))
	if err != nil {
		t.Fatal(err)
	}
	e := RawError(em.Error)
	if e.Code != -32099 || e.Message != "custom" {
		t.Fatalf("decoded error = %+v", e)
	}
	if got := string(AppendError(nil, em.ID, e)); got != `{"jsonrpc":"2.0","id":3,"error":`+rawErr+`}` {
		t.Fatalf("relayed error changed: %s", got)
	}
}

func TestIDsEchoVerbatim(t *testing.T) {
	for _, id := range []string{`1`, `"1"`, `-0`, `1e3`, `12345678901234567890123`, `"\u00e9"`} {
		m, err := Parse([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`))
		if err != nil {
			t.Fatalf("id %s: %v", id, err)
		}
		if got := string(AppendResult(nil, m.ID, json.RawMessage(`{}`))); got != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` {
			t.Fatalf("id %s answered as %s", id, got)
		}
	}
	// The string and number forms of one id are different requests.
	if ID(`1`).Key() == ID(`"1"`).Key() {
		t.Fatal("1 and \"1\" share a key")
	}
}

func TestBatch(t *testing.T) {
	t.Run("empty batch is invalid", func(t *testing.T) {
		_, _, err := ParseBatch([]byte(` [ ] `))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Code != CodeInvalidRequest {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("malformed batch is a parse error", func(t *testing.T) {
		_, _, err := ParseBatch([]byte(`[{"jsonrpc":"2.0"`))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Code != CodeParseError {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("each element is judged alone", func(t *testing.T) {
		msgs, errs, err := ParseBatch([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}, 5, {"jsonrpc":"2.0","method":"n"}]`))
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 3 || errs[0] != nil || errs[1] == nil || errs[2] != nil {
			t.Fatalf("msgs=%d errs=%v", len(msgs), errs)
		}
		if msgs[2].Kind() != KindNotification {
			t.Fatal("third element should be a notification")
		}
	})
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\ slash", "ctl\x00\x01\x1f", "html <&>", "é✓😀", "bad\xffutf8", "sep\u2028\u2029"} {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestLookup(t *testing.T) {
	obj := []byte(`{"name":"echo","arguments":{"a":[1,{"b":2}]},"_meta":{"progressToken":"t1"},"name":"last"}`)
	if raw, _ := Lookup(obj, "arguments"); string(raw) != `{"a":[1,{"b":2}]}` {
		t.Fatalf("arguments = %s", raw)
	}
	if s, ok := LookupString(obj, "name"); !ok || s != "last" {
		t.Fatalf("name = %q (last duplicate wins, as encoding/json)", s)
	}
	if raw, _ := Lookup(obj, "missing"); raw != nil {
		t.Fatalf("missing = %s", raw)
	}
	if _, err := Lookup([]byte(`[1]`), "a"); err != ErrNotObject {
		t.Fatalf("array: err = %v", err)
	}
}
