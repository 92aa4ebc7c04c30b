package intercept

import "encoding/json"

// RedactForTest is redactStrings with the built-in patterns.
func RedactForTest(raw json.RawMessage) (json.RawMessage, bool) {
	r, _ := newRedactor(nil)
	return redactStrings(raw, func(s string) (string, bool) { return r.text(s, map[string]int{}) })
}

// DecodeAnswerForTest is decodeAnswer: its decision, arguments and result.
func DecodeAnswerForTest(raw []byte) (decision string, args, result json.RawMessage, err error) {
	a, err := decodeAnswer(raw)
	return a.Decision, a.Arguments, a.Result, err
}
