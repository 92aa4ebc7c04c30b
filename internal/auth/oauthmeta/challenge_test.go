package oauthmeta_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
)

func TestParseChallenge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   oauthmeta.Challenge
		ok     bool
	}{
		{"ResourceMetadataAndScope", []string{`Bearer resource_metadata="https://r.example/.well-known/oauth-protected-resource", scope="a b"`},
			oauthmeta.Challenge{Scheme: "Bearer", ResourceMetadata: "https://r.example/.well-known/oauth-protected-resource", Scope: []string{"a", "b"}}, true},
		{"InsufficientScope", []string{`Bearer error="insufficient_scope", scope="write", error_description="no, \"really\""`},
			oauthmeta.Challenge{Scheme: "Bearer", Scope: []string{"write"}, Error: "insufficient_scope"}, true},
		{"SchemeInAnyCaseAndTokens", []string{`bearer error=invalid_token, scope=x`}, oauthmeta.Challenge{Scheme: "Bearer", Scope: []string{"x"}, Error: "invalid_token"}, true},
		{"BareBearer", []string{`Bearer`}, oauthmeta.Challenge{Scheme: "Bearer"}, true},
		{"AfterAnotherChallenge", []string{`Basic realm="x", Bearer scope="s"`}, oauthmeta.Challenge{Scheme: "Bearer", Scope: []string{"s"}}, true},
		{"BeforeAnotherChallenge", []string{`Bearer scope="s", DPoP algs="ES256"`}, oauthmeta.Challenge{Scheme: "Bearer", Scope: []string{"s"}}, true},
		{"InASecondHeader", []string{`Basic realm="x"`, `Bearer error="invalid_token"`}, oauthmeta.Challenge{Scheme: "Bearer", Error: "invalid_token"}, true},
		{"EscapedQuote", []string{`Bearer scope="a\"b"`}, oauthmeta.Challenge{Scheme: "Bearer", Scope: []string{`a"b`}}, true},
		{"NoBearerNorDPoP", []string{`Basic realm="x"`, `Negotiate abc`}, oauthmeta.Challenge{}, false},
		{"DPoP", []string{`Basic realm="x"`, `DPoP algs="ES256", resource_metadata="https://r.example/m"`},
			oauthmeta.Challenge{Scheme: "DPoP", ResourceMetadata: "https://r.example/m"}, true},
		{"DPoPNonce", []string{`DPoP error="use_dpop_nonce", error_description="fresh nonce"`}, oauthmeta.Challenge{Scheme: "DPoP", Error: "use_dpop_nonce"}, true},
		{"Nothing", nil, oauthmeta.Challenge{}, false},
		{"Unterminated", []string{`Bearer scope="a b`}, oauthmeta.Challenge{Scheme: "Bearer", Scope: []string{"a", "b"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := oauthmeta.ParseChallenge(tc.values)
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
		oauthmeta.ParseChallenge([]string{raw})
		if strings.ContainsAny(scope+url, "\"\\") {
			return
		}
		got, ok := oauthmeta.ParseChallenge([]string{`Bearer resource_metadata="` + url + `", scope="` + scope + `"`})
		if !ok || got.ResourceMetadata != url || strings.Join(got.Scope, " ") != strings.Join(strings.Fields(scope), " ") {
			t.Errorf("round trip of %q, %q: %+v %v", scope, url, got, ok)
		}
	})
}
