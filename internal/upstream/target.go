package upstream

import (
	"fmt"
	"net/url"
	"path"
	"time"
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

// SessionMode says whether a backend's clients share one upstream session
// or each get their own.
type SessionMode string

// The session modes; "" is SessionShared.
const (
	SessionShared    SessionMode = "shared"
	SessionPerClient SessionMode = "per-client"
)

// CheckSessions checks a backend's session keys: the mode, whether its
// kind can give each client a session of its own, and the idle timeout
// and the cap that only such sessions have. A perUser backend's
// principals have sessions of their own too.
func CheckSessions(k Kind, mode SessionMode, perUser bool, idle time.Duration, max int) *TargetProblem {
	switch mode {
	case "", SessionShared:
		switch {
		case perUser && idle < 0:
			return &TargetProblem{"session_idle_timeout", "must not be negative"}
		case perUser && max < 0:
			return &TargetProblem{"session_max", "must not be negative"}
		case perUser:
		case idle != 0:
			return &TargetProblem{"session_idle_timeout", "needs session: " + string(SessionPerClient) + " or identity: " + string(IdentityPerUser)}
		case max != 0:
			return &TargetProblem{"session_max", "needs session: " + string(SessionPerClient) + " or identity: " + string(IdentityPerUser)}
		}
		return nil
	case SessionPerClient:
	default:
		return &TargetProblem{"session", fmt.Sprintf("%q is not %s or %s", string(mode), SessionShared, SessionPerClient)}
	}
	switch {
	case !k.PerClient():
		return &TargetProblem{"session", "not used by kind " + string(k) + " (only stdio, http and sse)"}
	case idle < 0:
		return &TargetProblem{"session_idle_timeout", "must not be negative"}
	case max < 0:
		return &TargetProblem{"session_max", "must not be negative"}
	}
	return nil
}

// CheckEntryRule checks a rule about a backend's entries (a minimum role,
// a short description): the kind it applies to ("" for every kind) and
// the path.Match pattern of the names it applies to.
func CheckEntryRule(kind, pattern string) *TargetProblem {
	switch kind {
	case "", "tool", "resource", "prompt":
	default:
		return &TargetProblem{"kind", fmt.Sprintf("%q is not tool, resource or prompt (or empty for any)", kind)}
	}
	if pattern == "" {
		return &TargetProblem{"name", "required"}
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return &TargetProblem{"name", fmt.Sprintf("%q is not a valid pattern: %v", pattern, err)}
	}
	return nil
}
