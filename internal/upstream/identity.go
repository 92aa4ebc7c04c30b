package upstream

import (
	"fmt"

	"golang.org/x/net/http/httpguts"
)

// IdentityMode says whom a backend sees calling: the gateway, with one
// credential for every caller, or each calling principal with their own.
type IdentityMode string

// The identity modes; "" is IdentityShared.
const (
	IdentityShared  IdentityMode = "shared"
	IdentityPerUser IdentityMode = "per_user"
)

// PerUser reports whether m gives each principal their own credential.
func (m IdentityMode) PerUser() bool { return m == IdentityPerUser }

// PerPrincipal reports whether a backend of kind k can open a session of
// its own for each principal: a per-client kind, or a process (a program
// and its proxy each).
func (k Kind) PerPrincipal() bool { return k.PerClient() || k == KindProcess }

// The ways a per_user backend gets each principal's credential.
const (
	WayVault    = "vault"    // each person's own stored key
	WayExchange = "exchange" // the caller's token exchanged (RFC 8693)
	WayOAuth    = "oauth"    // each person's own authorization of the backend
)

// CheckIdentity checks a backend's identity keys: the mode, whether its
// kind can give each principal a session of their own, and way ("" for
// none). A stored key goes in a header (http, sse) or an environment
// variable (stdio, process), named by header and env. An exchanged token
// is an HTTP bearer (http, sse).
func CheckIdentity(k Kind, mode IdentityMode, way, header, env string) *TargetProblem {
	switch mode {
	case "", IdentityShared:
		if way != "" {
			return &TargetProblem{"credential", "needs identity: " + string(IdentityPerUser)}
		}
		return nil
	case IdentityPerUser:
	default:
		return &TargetProblem{"identity", fmt.Sprintf("%q is not %s or %s", string(mode), IdentityShared, IdentityPerUser)}
	}
	http := k == KindHTTP || k == KindSSE
	switch {
	case !k.PerPrincipal():
		return &TargetProblem{"identity", "per_user is not used by kind " + string(k) + " (only stdio, http, sse and process)"}
	case way == "":
		return &TargetProblem{"credential", "required with identity: per_user (vault: each person's own key; exchange: their token exchanged; oauth: their own authorization)"}
	case (way == WayExchange || way == WayOAuth) && !http:
		return &TargetProblem{"credential." + way, "not used by kind " + string(k) + " (the token is an HTTP bearer: http and sse)"}
	case way == WayExchange || way == WayOAuth:
		return nil
	}
	switch {
	case http && header == "":
		return &TargetProblem{"credential.vault.header", "required for kind " + string(k) + " (the header each person's key is sent in)"}
	case http && env != "":
		return &TargetProblem{"credential.vault.env", "not used by kind " + string(k) + " (name a header)"}
	case !http && env == "":
		return &TargetProblem{"credential.vault.env", "required for kind " + string(k) + " (the variable each person's key is set in)"}
	case !http && header != "":
		return &TargetProblem{"credential.vault.header", "not used by kind " + string(k) + " (name an environment variable)"}
	case header != "" && !httpguts.ValidHeaderFieldName(header):
		return &TargetProblem{"credential.vault.header", fmt.Sprintf("%q is not a header name", header)}
	case env != "" && !validEnvName(env):
		return &TargetProblem{"credential.vault.env", fmt.Sprintf("%q is not a variable name", env)}
	}
	return nil
}

// validEnvName reports whether v is a portable environment variable
// name: letters, digits and underscores, not starting with a digit.
func validEnvName(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return v != ""
}
