// spec.go is what a backend is: the configuration of one backend server,
// checked before anything is started.

package backends

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
)

// Spec configures one backend.
type Spec struct {
	// Name identifies the backend in the catalogue prefix, logs, errors and
	// states; unique within a Set.
	Name string
	Kind upstream.Kind
	// Command is the program and its arguments (stdio).
	Command []string
	// Env is added to the gateway's environment for the command (stdio),
	// as KEY=VALUE. Its values are treated as secrets: never reported.
	Env []string
	// URL is the endpoint (http, sse).
	URL string
	// Header is sent with every request (http, sse): static upstream
	// credentials. Its values are treated as secrets: never reported.
	Header http.Header
	// OAuth, when set, gets the backend's access tokens by the client
	// credentials grant (http, sse). Its secret is never reported.
	OAuth *oauthclient.ClientCredentials
	// Authorization, when set, meets the backend's OAuth challenges by
	// the authorization code grant an admin completes (http, sse): the
	// backend then sends its tokens, and an admin's authorization wakes
	// a backend waiting out its backoff.
	Authorization *oauthclient.Authorization
	// Prefix goes before tool and prompt names at the front (default
	// Name+"__"; catalogue.NoPrefix for none).
	Prefix string
	// MinRole is the minimum role of the entries the backend relays that
	// no rule of MinRoles matches.
	MinRole string
	// MinRoles sets minimum roles by entry name pattern; the first rule
	// matching an entry wins.
	MinRoles []RoleRule
	// Shorts give entries their compact-view descriptions, by name
	// pattern (the first match wins); DeriveShort makes one for the
	// others ("title", "first_sentence" or "": none). See ShortFor.
	Shorts []ShortRule
	// Shapes shape the backend's tools and prompts (catalogue/shape.go).
	Shapes      catalogue.Shapes
	DeriveShort string
	// Session is SessionShared (the default, "") or SessionPerClient:
	// each front session then gets an upstream session of its own
	// (sessions.go). Stdio, http and sse only.
	Session upstream.SessionMode
	// Identity is upstream.IdentityShared (the default, "") or
	// IdentityPerUser: each principal then gets an upstream session of
	// their own, opened with their own credential (personal.go).
	Identity upstream.IdentityMode
	// CredentialHeader (http, sse) or CredentialEnv (stdio, process) is
	// where a per_user principal's credential goes: their stored one, or
	// "Bearer " and their exchanged token in Authorization.
	CredentialHeader, CredentialEnv string
	// Exchange, when set, gets a per_user principal's credential by
	// exchanging the token they signed in with (RFC 8693; http, sse): it
	// is sent as the bearer token.
	Exchange *oauthclient.TokenExchange
	// People, when set, is each per_user principal's own authorization of
	// the backend (http, sse): their calls carry their token, and the
	// backend's own connection that of the person who last authorized it.
	People *oauthclient.People
	// SessionIdleTimeout ends a per-client upstream session unused for
	// that long (default DefaultSessionIdleTimeout).
	SessionIdleTimeout time.Duration
	// MaxMessageBytes bounds one message from the backend (0: the
	// transport's default: 4 MiB for stdio, 16 MiB for HTTP and SSE, 64
	// MiB for the wire). An answer over it fails its call at once
	// (-32603, data.kind "too_large"); the connection stays up.
	MaxMessageBytes int
	// ValidateArguments checks tools/call arguments against the schema
	// the backend listed before it is asked.
	ValidateArguments bool
	// CallTimeout bounds a call's wait for an answer or progress (0:
	// none); see catalogue.Options.CallTimeout.
	CallTimeout time.Duration
	// SessionMax caps the per-client upstream sessions open at once
	// (default DefaultSessionMax).
	SessionMax int
	// Era is what the gateway speaks to the backend: mcp.EraAuto (learn
	// it, era.go), mcp.EraSession or mcp.EraSessionless. Only stdio and
	// http backends are ever spoken to sessionless; a process backend's
	// era is what its proxy speaks to the program (--upstream-era).
	Era mcp.Era

	// Arguments is the tools begin's arguments, JSON (proxy, process);
	// nil sends a begin without arguments.
	Arguments []byte
	// Secrets are fed to the proxy after the begin (proxy, process), name
	// to value. Its values are treated as secrets: never reported.
	Secrets map[string]string
	// KeepAlive and KeepAliveTimeout are the framed connection's pings
	// (proxy, process; wire.Options: zero is the default, a negative
	// KeepAlive none). A process backend gives them to its proxy too.
	KeepAlive, KeepAliveTimeout time.Duration
	// Postgres is the host:port of the database the program's
	// connections are paired with (proxy, process; "": declined). A
	// process backend's program is told MCPGATE_POSTGRES_ADDR.
	Postgres string
	// Daemon is the ws:// endpoint the program's daemon connections are
	// relayed to (proxy, process; "": declined). A process backend's
	// program is told MCPGATE_DAEMON_URL.
	Daemon string
	// WireTLS is a wss:// proxy's TLS: the CA its certificate is checked
	// against and the gateway's client certificate (nil: the system's
	// roots, no client certificate). WireToken is the bearer token the
	// proxy asks of every request ("": none); a secret, never reported.
	WireTLS   *tls.Config
	WireToken string
	// ProxyCommand is the proxy to start beside the program (process);
	// default: this executable's `proxy` command. Its --listen and
	// --upstream flags are added, and --upstream-era unless Era is auto.
	ProxyCommand []string
}

// RoleRule is one rule of Spec.MinRoles.
type RoleRule struct {
	// Kind is "tool", "resource" (resources and URI templates) or
	// "prompt"; "" matches every kind.
	Kind string
	// Name is a path.Match pattern over the backend's own tool or prompt
	// name (before prefixing), or a resource's URI or URI template.
	Name string
	Role string
}

// MinRoleFor is the minimum role of the backend's entry of kind ("tool",
// "resource" or "prompt") named name at the backend: the first matching
// rule's role, else MinRole.
func (s Spec) MinRoleFor(kind, name string) string {
	for _, r := range s.MinRoles {
		if r.Kind != "" && r.Kind != kind {
			continue
		}
		if ok, _ := path.Match(r.Name, name); ok {
			return r.Role
		}
	}
	return s.MinRole
}

// ShortRule is one rule of Spec.Shorts.
type ShortRule struct {
	Kind, Name, Description string // Kind and Name as RoleRule's
}

// ShortFor is the compact-view description of the backend's entry of kind
// named name, whose full description is full and whose title is title. It
// is the first matching rule's, else one derived as DeriveShort says. It is
// "" when there is none, or when it would not be shorter than full; refused
// then reports that a configured one was not used.
func (s Spec) ShortFor(kind, name, full, title string) (short string, refused bool) {
	configured := false
	for _, r := range s.Shorts {
		if r.Kind != "" && r.Kind != kind {
			continue
		}
		if ok, _ := path.Match(r.Name, name); ok {
			short, configured = r.Description, true
			break
		}
	}
	if short == "" {
		switch s.DeriveShort {
		case "title":
			short = title
		case "first_sentence":
			short = firstSentence(full)
		}
	}
	if short == "" || len(short) >= len(full) {
		return "", configured
	}
	return short, false
}

// firstSentence is s up to the end of its first sentence (a full stop,
// question or exclamation mark followed by a space or the end, or a line
// break).
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	for i, r := range s {
		switch r {
		case '\n':
			return strings.TrimSpace(s[:i])
		case '.', '?', '!':
			if i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n' {
				return s[:i+1]
			}
		}
	}
	return s
}

// ErrInvalidSpec is wrapped by every error Validate returns.
var ErrInvalidSpec = errors.New("backend: invalid spec")

// Validate reports the first thing wrong with s, naming the field.
func (s Spec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: backend %q: %s", ErrInvalidSpec, s.Name, fmt.Sprintf(format, args...))
	}
	if s.Name == "" || strings.ContainsAny(s.Name, " \t\r\n") {
		return bad("name must be non-empty and without spaces")
	}
	if p := upstream.CheckTarget(s.Kind, s.Command, s.URL); p != nil {
		return bad("%s: %s", p.Key, p.Why)
	}
	for i, kv := range s.Env {
		if !strings.Contains(kv, "=") {
			return bad("env entry %d is not KEY=VALUE", i)
		}
	}
	if s.Kind == upstream.KindProcess && len(s.ProxyCommand) > 0 && s.ProxyCommand[0] == "" {
		return bad("proxy command has no program")
	}
	if s.Arguments != nil && !json.Valid(s.Arguments) {
		return bad("arguments are not JSON")
	}
	way := ""
	switch {
	case s.Exchange != nil:
		way = upstream.WayExchange
	case s.People != nil:
		way = upstream.WayOAuth
	case s.Identity.PerUser():
		way = upstream.WayVault
	}
	if p := upstream.CheckIdentity(s.Kind, s.Identity, way, s.CredentialHeader, s.CredentialEnv); p != nil {
		return bad("%s: %s", p.Key, p.Why)
	}
	if p := upstream.CheckSessions(s.Kind, s.Session, s.Identity.PerUser(), s.SessionIdleTimeout, s.SessionMax); p != nil {
		return bad("%s: %s", p.Key, p.Why)
	}
	for i, r := range s.MinRoles {
		if p := upstream.CheckEntryRule(r.Kind, r.Name); p != nil {
			return bad("min role rule %d: %s: %s", i, p.Key, p.Why)
		}
	}
	return nil
}
