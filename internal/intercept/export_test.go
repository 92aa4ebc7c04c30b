package intercept

import "encoding/json"

// RedactForTest is redactStrings with the built-in patterns.
func RedactForTest(raw json.RawMessage) (json.RawMessage, bool) {
	r, _ := newRedactor(nil)
	return redactStrings(raw, func(s string) (string, bool) { return r.text(s, map[string]int{}) })
}
