package upstream

import (
	"fmt"
	"net/url"
)

// TargetProblem is what is wrong with how a backend is reached: the
// configuration key at fault, and why.
type TargetProblem struct{ Key, Why string }

// CheckTarget checks the command or URL that a backend of kind k is
// reached by (which of them the kind does not use is the configuration's
// to refuse). The configuration and the backends both ask it, so that a
// backend refused by one is refused by the other, for the same reason.
func CheckTarget(k Kind, command []string, rawURL string) *TargetProblem {
	switch k {
	case KindStdio, KindProcess:
		if len(command) == 0 || command[0] == "" {
			return &TargetProblem{"command", "required for kind " + string(k)}
		}
	case KindHTTP, KindSSE:
		return checkURL(rawURL, k, "http", "https", "required for kind "+string(k), "not an http or https URL")
	case KindProxy:
		return checkURL(rawURL, k, "ws", "wss", "required for kind proxy (ws://HOST:PORT)", "not a ws:// or wss:// URL")
	case "":
		return &TargetProblem{"kind", "required (stdio, http, sse, proxy or process)"}
	default:
		return &TargetProblem{"kind", fmt.Sprintf("%q is not stdio, http, sse, proxy or process", string(k))}
	}
	return nil
}

// checkURL holds rawURL to one of two schemes, with a host and without
// credentials.
func checkURL(rawURL string, k Kind, scheme, secure, missing, wrong string) *TargetProblem {
	if rawURL == "" {
		return &TargetProblem{"url", missing}
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != scheme && u.Scheme != secure) || u.Host == "" {
		return &TargetProblem{"url", wrong}
	}
	if u.User != nil {
		how := "use headers_from"
		if k == KindProxy {
			how = "use token_from or token_file"
		}
		return &TargetProblem{"url", "must not carry credentials; " + how}
	}
	return nil
}
