// scrub.go keeps secrets out of what a backend reports. A backend's error
// can quote what it was given: a server echoing the Authorization header it
// refused, a shell printing its environment. State is shown on /readyz
// without authentication. Every configured header and env value is so cut
// out of an error before it is stored.

package backends

import (
	"slices"
	"sort"
	"strings"
)

// minSecretLen is the shortest value scrubbed: shorter ones ("1", "on")
// are no secret, and cutting them out would garble every message.
const minSecretLen = 4

const redacted = "[redacted]"

// secrets returns the values to scrub, longest first (so that a secret
// containing another is cut whole).
func (s Spec) secrets() []string {
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= minSecretLen {
			out = append(out, v)
		}
	}
	for _, vs := range s.Header {
		for _, v := range vs {
			add(v)
			add(tokenOf(v)) // "Bearer TOKEN": the token alone may be quoted too

		}
	}
	for _, kv := range s.Env {
		_, v, _ := strings.Cut(kv, "=")
		add(v)
	}
	for _, v := range s.Secrets {
		add(v)
	}
	add(s.WireToken)
	if s.OAuth != nil {
		add(s.OAuth.ClientSecret)
	}
	if s.Exchange != nil {
		add(s.Exchange.Client.ClientSecret)
		if s.Exchange.Grant != nil {
			add(s.Exchange.Grant.ClientSecret)
		}
	}
	if a := s.Authorization; a != nil && a.Pre != nil {
		add(a.Pre.ClientSecret)
	}
	if p := s.People; p != nil && p.Pre != nil {
		add(p.Pre.ClientSecret)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// withSecret is secrets and a principal's credential v (and the token of
// "Bearer TOKEN"), longest first; secrets is not changed.
func withSecret(secrets []string, v string) []string {
	out := slices.Clone(secrets)
	for _, s := range []string{v, tokenOf(v)} {
		if s = strings.TrimSpace(s); len(s) >= minSecretLen {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// tokenOf is what follows the first space of v ("" for none).
func tokenOf(v string) string {
	_, tok, _ := strings.Cut(v, " ")
	return tok
}

// scrub returns msg with every secret replaced.
func scrub(msg string, secrets []string) string {
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	return msg
}
