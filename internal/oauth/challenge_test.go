package oauth_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/oauth"
)

func TestParseChallenge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   oauth.Challenge
		ok     bool
	}{
		{"ResourceMetadataAndScope", []string{`Bearer resource_metadata="https://r.example/.well-known/oauth-protected-resource", scope="a b"`},
			oauth.Challenge{Scheme: "Bearer", ResourceMetadata: "https://r.example/.well-known/oauth-protected-resource", Scope: []string{"a", "b"}}, true},
		{"InsufficientScope", []string{`Bearer error="insufficient_scope", scope="write", error_description="no, \"really\""`},
			oauth.Challenge{Scheme: "Bearer", Scope: []string{"write"}, Error: "insufficient_scope"}, true},
		{"SchemeInAnyCaseAndTokens", []string{`bearer error=invalid_token, scope=x`}, oauth.Challenge{Scheme: "Bearer", Scope: []string{"x"}, Error: "invalid_token"}, true},
		{"BareBearer", []string{`Bearer`}, oauth.Challenge{Scheme: "Bearer"}, true},
		{"AfterAnotherChallenge", []string{`Basic realm="x", Bearer scope="s"`}, oauth.Challenge{Scheme: "Bearer", Scope: []string{"s"}}, true},
		{"BeforeAnotherChallenge", []string{`Bearer scope="s", DPoP algs="ES256"`}, oauth.Challenge{Scheme: "Bearer", Scope: []string{"s"}}, true},
		{"InASecondHeader", []string{`Basic realm="x"`, `Bearer error="invalid_token"`}, oauth.Challenge{Scheme: "Bearer", Error: "invalid_token"}, true},
		{"EscapedQuote", []string{`Bearer scope="a\"b"`}, oauth.Challenge{Scheme: "Bearer", Scope: []string{`a"b`}}, true},
		{"NoBearerNorDPoP", []string{`Basic realm="x"`, `Negotiate abc`}, oauth.Challenge{}, false},
		{"DPoP", []string{`Basic realm="x"`, `DPoP algs="ES256", resource_metadata="https://r.example/m"`},
			oauth.Challenge{Scheme: "DPoP", ResourceMetadata: "https://r.example/m"}, true},
		{"DPoPNonce", []string{`DPoP error="use_dpop_nonce", error_description="fresh nonce"`}, oauth.Challenge{Scheme: "DPoP", Error: "use_dpop_nonce"}, true},
		{"Nothing", nil, oauth.Challenge{}, false},
		{"Unterminated", []string{`Bearer scope="a b`}, oauth.Challenge{Scheme: "Bearer", Scope: []string{"a", "b"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := oauth.ParseChallenge(tc.values)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseChallenge(%q) = %+v, %v; want %+v, %v", tc.values, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzParseChallenge: any header value parses without a panic, and a
// challenge built from a scope and a URL without quotes or backslashes
// reads back as it was.
func FuzzParseChallenge(f *testing.F) {
	f.Add(`Bearer resource_metadata="https://r.example/x", scope="a b"`, "a b", "https://r.example/x")
	f.Add(`Basic , Bearer ,, error=`, "s", "u")
	f.Add(`Bearer scope="\`, "", "")
	f.Fuzz(func(t *testing.T, raw, scope, url string) {
		oauth.ParseChallenge([]string{raw})
		if strings.ContainsAny(scope+url, "\"\\") {
			return
		}
		got, ok := oauth.ParseChallenge([]string{`Bearer resource_metadata="` + url + `", scope="` + scope + `"`})
		if !ok || got.ResourceMetadata != url || strings.Join(got.Scope, " ") != strings.Join(strings.Fields(scope), " ") {
			t.Errorf("round trip of %q, %q: %+v %v", scope, url, got, ok)
		}
	})
}
