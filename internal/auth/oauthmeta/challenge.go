// challenge.go reads a resource server's Bearer or DPoP challenge (RFC
// 6750 §3, RFC 9449 §7.1, RFC 9728 §5.1): where its resource metadata is,
// which scope it wants, and why it refused.

package oauthmeta

import (
	"strings"
)

// Challenge is a Bearer or DPoP challenge's parameters.
type Challenge struct {
	Scheme           string   // "Bearer" or "DPoP"
	ResourceMetadata string   // resource_metadata: the PRM document's URL
	Scope            []string // scope: what the request needs
	Error            string   // error: invalid_token, insufficient_scope, …
}

// ParseChallenge finds the first Bearer or DPoP challenge among a
// response's WWW-Authenticate values; ok is false when there is none.
func ParseChallenge(values []string) (Challenge, bool) {
	for _, v := range values {
		scheme, params, ok := challengeParams(v)
		if !ok {
			continue
		}
		c := Challenge{Scheme: scheme, ResourceMetadata: params["resource_metadata"], Error: params["error"]}
		if scope := strings.Fields(params["scope"]); len(scope) > 0 {
			c.Scope = scope
		}
		return c, true
	}
	return Challenge{}, false
}

// challengeParams parses the auth-params of the first Bearer or DPoP
// challenge in one header value (which may hold several challenges).
func challengeParams(v string) (scheme string, params map[string]string, in bool) {
	for s := strings.TrimSpace(v); s != ""; {
		// A token: a scheme (no '=' after it) or a parameter name.
		n := strings.IndexAny(s, " =,")
		if n < 0 {
			n = len(s)
		}
		tok := s[:n]
		rest := strings.TrimLeft(s[n:], " ")
		if !strings.HasPrefix(rest, "=") {
			if tok != "" { // a new challenge begins
				if in {
					return scheme, params, true
				}
				switch {
				case strings.EqualFold(tok, "Bearer"):
					scheme, in = "Bearer", true
				case strings.EqualFold(tok, "DPoP"):
					scheme, in = "DPoP", true
				}
				if in {
					params = map[string]string{}
				}
			}
			s = strings.TrimLeft(rest, " ,")
			continue
		}
		rest = strings.TrimLeft(rest[1:], " ")
		var val string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
				}
				b.WriteByte(rest[i])
			}
			val, rest = b.String(), rest[min(i+1, len(rest)):]
		} else {
			m := strings.IndexAny(rest, " ,")
			if m < 0 {
				m = len(rest)
			}
			val, rest = rest[:m], rest[m:]
		}
		if in {
			params[strings.ToLower(tok)] = val
		}
		s = strings.TrimLeft(rest, " ,")
	}
	return scheme, params, in
}
