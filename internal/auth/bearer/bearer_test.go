package bearer

import (
	"errors"
	"net/http"
	"testing"
)

func TestTokenReadsOneBearerCredential(t *testing.T) {
	for _, tc := range []struct {
		rule    string
		headers []string
		want    string
		err     error
	}{
		{"a bearer credential is read", []string{"Bearer abc"}, "abc", nil},
		{"the scheme is case-insensitive", []string{"bEaReR abc"}, "abc", nil},
		{"spaces around are trimmed", []string{"  Bearer   abc  "}, "abc", nil},
		{"no header is no credential", nil, "", ErrNone},
		{"another scheme is malformed", []string{"Basic YWJj"}, "", ErrMalformed},
		{"an empty credential is malformed", []string{"Bearer "}, "", ErrMalformed},
		{"a credential with a space is malformed", []string{"Bearer a b"}, "", ErrMalformed},
		{"the scheme alone is malformed", []string{"Bearer"}, "", ErrMalformed},
		{"two headers are malformed, not a choice", []string{"Bearer a", "Bearer b"}, "", ErrMalformed},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.headers {
				h.Add("Authorization", v)
			}
			got, err := Token(h)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("Token(%q) = %q, %v; want %q, %v", tc.headers, got, err, tc.want, tc.err)
			}
		})
	}
}
