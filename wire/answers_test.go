// answers_test.go pins the three small answers: the begin's (Begun or an
// error value), Info's (a document, none, or an error value) and the
// secrets feed's (Fed or a refusal).

package wire_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/wire"
)

func TestAnswersRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer interface{ Append([]byte) []byte }
		bytes  string
		decode func([]byte) (any, error)
	}{
		{"begun with the register answer", wire.BeginAnswer{Answer: json.RawMessage(`{"id":12345678901234567890}`)},
			"\x00{\"id\":12345678901234567890}", decodeBegin},
		{"begun with nothing (no contract)", wire.BeginAnswer{}, "\x00", decodeBegin},
		{"begin failed", wire.BeginAnswer{Error: json.RawMessage(`{"kind":"program","status":400,"error":"no"}`)},
			"\x01{\"kind\":\"program\",\"status\":400,\"error\":\"no\"}", decodeBegin},
		{"info document", wire.InfoAnswer{Document: json.RawMessage(`{"readme":"# hi","secrets":["A"]}`)},
			"\x00{\"readme\":\"# hi\",\"secrets\":[\"A\"]}", decodeInfo},
		{"info missing", wire.InfoAnswer{}, "\x01", decodeInfo},
		{"info unreadable", wire.InfoAnswer{Error: json.RawMessage(`"bad yaml"`)}, "\x02\"bad yaml\"", decodeInfo},
		{"secrets fed", wire.SecretsAnswer{}, "\x00", decodeSecretsAnswer},
		{"secrets refused", wire.SecretsAnswer{Error: json.RawMessage(`{"kind":"program"}`)},
			"\x01{\"kind\":\"program\"}", decodeSecretsAnswer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.answer.Append(nil); string(got) != tc.bytes {
				t.Fatalf("Append = %q, want %q", got, tc.bytes)
			}
			got, err := tc.decode([]byte(tc.bytes))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.answer) {
				t.Fatalf("Decode = %#v, want %#v", got, tc.answer)
			}
		})
	}
}

func decodeBegin(p []byte) (any, error)         { return wire.DecodeBeginAnswer(p) }
func decodeInfo(p []byte) (any, error)          { return wire.DecodeInfoAnswer(p) }
func decodeSecretsAnswer(p []byte) (any, error) { return wire.DecodeSecretsAnswer(p) }

func TestAnswerPredicates(t *testing.T) {
	if !(wire.BeginAnswer{}).Begun() || (wire.BeginAnswer{Error: json.RawMessage(`1`)}).Begun() {
		t.Error("Begun")
	}
	if !(wire.InfoAnswer{}).Missing() || (wire.InfoAnswer{Document: json.RawMessage(`{}`)}).Missing() {
		t.Error("Missing")
	}
	if !(wire.SecretsAnswer{}).Fed() || (wire.SecretsAnswer{Error: json.RawMessage(`1`)}).Fed() {
		t.Error("Fed")
	}
}

func TestAnswerDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		decode  func([]byte) (any, error)
		payload string
		want    func(error) bool
	}{
		{"begin empty", decodeBegin, "", func(err error) bool { return errors.Is(err, wire.ErrEmpty) }},
		{"begin unknown tag", decodeBegin, "\x02", func(err error) bool { return errors.Is(err, wire.UnknownTagError{Tag: 2}) }},
		{"begun with a broken answer", decodeBegin, "\x00{", isBodyError},
		{"begin error absent", decodeBegin, "\x01", isBodyError},
		{"info empty", decodeInfo, "", func(err error) bool { return errors.Is(err, wire.ErrEmpty) }},
		{"info unknown tag", decodeInfo, "\x03", func(err error) bool { return errors.Is(err, wire.UnknownTagError{Tag: 3}) }},
		{"info document broken", decodeInfo, "\x00{\"a\"}", isBodyError},
		{"info error absent", decodeInfo, "\x02", isBodyError},
		{"secrets answer empty", decodeSecretsAnswer, "", func(err error) bool { return errors.Is(err, wire.ErrEmpty) }},
		{"secrets answer unknown tag", decodeSecretsAnswer, "\x02", func(err error) bool { return errors.Is(err, wire.UnknownTagError{Tag: 2}) }},
		{"secrets refusal broken", decodeSecretsAnswer, "\x01nul", isBodyError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.decode([]byte(tc.payload)); !tc.want(err) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func FuzzBeginAnswer(f *testing.F) {
	for _, s := range []string{"\x00", "\x00{\"a\":1e999}", "\x01\"no\"", "\x02", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		checkCodec(t, p, wire.DecodeBeginAnswer, always[wire.BeginAnswer])
	})
}

func FuzzInfoAnswer(f *testing.F) {
	for _, s := range []string{"\x00{\"readme\":\"x\"}", "\x01", "\x01tail", "\x02{\"kind\":\"parse\"}", "\x03", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		checkCodec(t, p, wire.DecodeInfoAnswer, func(a wire.InfoAnswer) bool { return !a.Missing() || len(p) == 1 })
	})
}

func FuzzSecretsAnswer(f *testing.F) {
	for _, s := range []string{"\x00", "\x00tail", "\x01{\"kind\":\"program\"}", "\x02", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		checkCodec(t, p, wire.DecodeSecretsAnswer, func(a wire.SecretsAnswer) bool { return !a.Fed() || len(p) == 1 })
	})
}
