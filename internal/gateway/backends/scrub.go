// scrub.go keeps secrets out of what a backend reports. A backend's error
// can quote what it was given: a server echoing the Authorization header it
// refused, a shell printing its environment. State is shown on /readyz
// without authentication. Every configured header and env value is so cut
// out of an error before it is stored.

package backends

import (
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
			// "Bearer TOKEN": the token alone may be quoted too.
			if _, tok, ok := strings.Cut(v, " "); ok {
				add(tok)
			}
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
	if a := s.Authorization; a != nil && a.Pre != nil {
		add(a.Pre.ClientSecret)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// scrub returns msg with every secret replaced.
func scrub(msg string, secrets []string) string {
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	return msg
}
