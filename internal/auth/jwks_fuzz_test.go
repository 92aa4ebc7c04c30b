// jwks_fuzz_test.go feeds the JWKS parser whatever a provider — or
// whoever answers in its place — might send: it must return keys or an
// error, never panic, and never a key of another type than asked.

package auth

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"testing"
)

func FuzzParseJWKS(f *testing.F) {
	f.Add([]byte(`{"keys":[{"kty":"RSA","kid":"a","n":"AQAB","e":"AQAB"}]}`), true)
	f.Add([]byte(`{"keys":[{"kty":"EC","kid":"b","crv":"P-256","x":"AAAA","y":"AAAA"}]}`), false)
	f.Add([]byte(`{"keys":[{"kty":"RSA","e":"AAAAAAAA"}]}`), true)
	f.Add([]byte(`{"keys":null}`), false)
	f.Add([]byte(`[]`), true)
	f.Fuzz(func(t *testing.T, doc []byte, rs bool) {
		alg := "ES256"
		if rs {
			alg = "RS256"
		}
		keys, err := parseJWKS(doc, alg)
		if err != nil {
			return
		}
		for kid, k := range keys {
			switch k.(type) {
			case *rsa.PublicKey:
				if !rs {
					t.Fatalf("kid %q: RSA key for ES256", kid)
				}
			case *ecdsa.PublicKey:
				if rs {
					t.Fatalf("kid %q: EC key for RS256", kid)
				}
			default:
				t.Fatalf("kid %q: key of type %T", kid, k)
			}
		}
	})
}
