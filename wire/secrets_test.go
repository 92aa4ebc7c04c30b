// secrets_test.go pins the secrets feed: values decode, the raw JSON is
// what is forwarded, and no value ever reaches an error message or a
// printed or logged form of the request.

package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

func TestSecretsDecodeKeepsRawAndValues(t *testing.T) {
	raw := ` {"API_KEY": "s3cr\u00e9t", "TOKEN":"a\"b", "API_KEY":"last"} `
	req, err := wire.DecodeChannelRequest(append([]byte{8}, raw...))
	if err != nil {
		t.Fatal(err)
	}
	s := req.(wire.Secrets)
	if len(s.Values) != 2 || s.Values["API_KEY"] != "last" || s.Values["TOKEN"] != `a"b` {
		t.Fatalf("values %d: duplicates keep the last, escapes decode", len(s.Values))
	}
	if string(s.Raw) != raw || string(s.Append(nil)[1:]) != raw {
		t.Fatalf("raw JSON not forwarded as it came")
	}
}

func TestSecretsEncodeFromValues(t *testing.T) {
	got := wire.Secrets{Values: map[string]string{"B": "2", "A": "1"}}.Append(nil)
	if string(got) != "\x08{\"A\":\"1\",\"B\":\"2\"}" {
		t.Fatalf("Append = %q", got)
	}
	if got := (wire.Secrets{}).Append(nil); string(got) != "\x08{}" {
		t.Fatalf("empty Append = %q", got)
	}
}

// TestSecretsErrorsQuoteNoValue feeds values that break the parser in
// every place a value can, and checks the error says nothing of them —
// where encoding/json's own message quotes the byte it stopped at ('h',
// the first letter of the secret).
func TestSecretsErrorsQuoteNoValue(t *testing.T) {
	const secret = "hunter2"
	cases := []string{
		`{"K":"hunter2`,                    // ends inside the value
		`{"K":"hunter2"`,                   // ends after it
		`{"K":"hunter2\q"}`,                // bad escape inside it
		"{\"K\":\"hunter2\x01\"}",          // control byte inside it
		`{"K":hunter2}`,                    // unquoted
		`{"K":"x"}hunter2`,                 // trailing
		`{"K":{"v":"hunter2"}}`,            // nested, not a string
		`{"K":["hunter2"]}`,                // an array
		`{"hunter2":1}`,                    // a name, then a number
		`{"K":1234567}`,                    // a number value
		`["hunter2"]`,                      // not an object
		`"hunter2"`,                        // not an object
		`{"K":"a","L":"hunter2","M":true}`, // a boolean after it
	}
	leaked := 0
	for _, raw := range cases {
		_, err := wire.DecodeChannelRequest(append([]byte{8}, raw...))
		var se wire.SecretsError
		if !errors.As(err, &se) {
			t.Fatalf("%q: err = %v, want SecretsError", raw, err)
		}
		for _, v := range []string{secret, "hunter", "1234567", "1234"} {
			if strings.Contains(err.Error(), v) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), v) {
				t.Fatalf("%q: error %q quotes a value", raw, err)
			}
		}
		if errors.Unwrap(err) != nil {
			t.Fatalf("%q: error wraps another that may quote a value", raw)
		}
		var m map[string]string
		if jerr := json.Unmarshal([]byte(raw), &m); jerr != nil &&
			(strings.Contains(jerr.Error(), "'h'") || strings.Contains(jerr.Error(), "'q'")) {
			leaked++
		}
	}
	if leaked == 0 {
		t.Fatalf("no case would have leaked through encoding/json: the test has no teeth")
	}
}

func TestSecretsErrorSaysWhere(t *testing.T) {
	_, err := wire.DecodeChannelRequest([]byte("\x08{\"A\": 5}"))
	var se wire.SecretsError
	if !errors.As(err, &se) || se.Offset != 6 || se.Reason != "a value is not a string" {
		t.Fatalf("err = %#v", err)
	}
}

// TestSecretsPrintRedacted: a Secrets printed or logged by mistake shows
// how many values there are and none of them.
func TestSecretsPrintRedacted(t *testing.T) {
	s := wire.Secrets{Values: map[string]string{"K": "hunter2"}, Raw: json.RawMessage(`{"K":"hunter2"}`)}
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("fed", "secrets", s)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("fed", "secrets", s)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s", s, s, s, s), buf.String()} {
		if strings.Contains(out, "hunter2") {
			t.Fatalf("printed form holds a value: %s", out)
		}
	}
}
