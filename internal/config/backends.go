// backends.go is the `backends:` section: the MCP servers the gateway
// relays. Secrets (environment values for a command, header values for a
// remote server) are never written in the YAML in clear: the file names an
// environment variable of the gateway's own, read when the backend is built.

package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/upstream"
)

// BackendConfig configures one backend server.
type BackendConfig struct {
	// Name names the backend: in logs, metrics, errors, and the NAME__
	// prefix of its tools and prompts.
	Name string        `yaml:"name"`
	Kind upstream.Kind `yaml:"kind"` // stdio, http, sse, proxy or process
	// Command is the program and its arguments (stdio).
	Command []string `yaml:"command"`
	// EnvFrom sets the command's variable NAME to the value of the
	// gateway's environment variable EnvFrom[NAME] (stdio, process).
	EnvFrom map[string]string `yaml:"env_from"`
	// EnvFiles sets the command's variable NAME to the content of the
	// file EnvFiles[NAME], a trailing newline cut (stdio, process): a
	// secret mounted as a file, read when the backend is built.
	EnvFiles map[string]string `yaml:"env_files"`
	// URL is the endpoint (http, sse).
	URL string `yaml:"url"`
	// HeadersFrom sends header H with the value of the gateway's
	// environment variable HeadersFrom[H] (http, sse).
	HeadersFrom map[string]string `yaml:"headers_from"`
	// OAuth gets the backend's access tokens by the client credentials
	// grant (http, sse): for a server that answers 401 with protected
	// resource metadata and serves that grant.
	OAuth *BackendOAuth `yaml:"oauth"`
	// Prefix goes before tool and prompt names (default NAME__; "-": none).
	Prefix string `yaml:"prefix"`
	// MinRole is the least role that sees and uses the backend's entries
	// (default viewer).
	MinRole string `yaml:"min_role"`
	// MinRoles sets the minimum role of the backend's entries by name
	// pattern: the first rule matching an entry wins, else MinRole.
	MinRoles []MinRoleRule `yaml:"min_roles"`
	// ShortDescriptions give the backend's entries the descriptions the
	// compact catalogue serves (catalogue:), by name pattern: the first
	// rule matching an entry wins. Each must be shorter than the entry's
	// own description (a longer one is not used, and is logged).
	ShortDescriptions []ShortDescription `yaml:"short_descriptions"`
	// DeriveShort makes a short description for the entries no rule
	// matches: "title" (the entry's title, or its annotations' title) or
	// "first_sentence" (of its description); "" makes none (the compact
	// view then serves the full description).
	DeriveShort string `yaml:"derive_short"`
	// Tools shape the backend's tools before callers see them, by name
	// or pattern, the first matching rule winning: hide, rename, a new
	// description, title or annotations, arguments fixed, defaulted or
	// hidden (shaping.go). Reloaded with the configuration.
	Tools []ToolShape `yaml:"tools"`
	// Prompts shape the backend's prompts as Tools do its tools: hide,
	// rename, a new description, arguments fixed.
	Prompts []PromptShape `yaml:"prompts"`
	// Session is "shared" (the default: one upstream session for every
	// client) or "per-client" (each client session gets its own upstream
	// session: a child process, or an HTTP session). Stdio, http and sse.
	// Calls from the stateless HTTP mode have no client session and use
	// the shared one.
	Session upstream.SessionMode `yaml:"session"`
	// SessionIdleTimeout ends a per-client upstream session unused for
	// that long (default 10m).
	SessionIdleTimeout Duration `yaml:"session_idle_timeout"`
	// SessionMax caps the per-client upstream sessions open at once
	// (default 64).
	SessionMax int `yaml:"session_max"`
	// CallTimeout bounds how long a call waits for the backend without
	// an answer or a progress notification (default 5m; "0s" turns it
	// off). When it passes, the caller is answered -32603 with data.kind
	// "timeout" and the backend is sent notifications/cancelled. It
	// is checked every sixteenth of itself (10ms to 1s), so a call ends
	// that much after it at most, never before.
	CallTimeout *Duration `yaml:"call_timeout"`
	// MaxMessageBytes bounds one message from the backend (default: 4 MiB
	// for stdio, 16 MiB for http and sse, 64 MiB for proxy and process).
	// An answer over it fails its call at once with -32603 and data.kind
	// "too_large"; the backend's connection stays up.
	MaxMessageBytes int `yaml:"max_message_bytes"`
	// ValidateArguments makes the gateway check tools/call arguments
	// against the input schema the backend listed, answering -32602 with
	// the violations (as for the gateway's own tools) before the backend
	// is asked. Off by default; a schema the validator cannot compile
	// leaves its tool unchecked, logged.
	ValidateArguments bool `yaml:"validate_arguments"`
	// Identity is whom the backend sees calling: "shared" (the default:
	// the gateway, with the backend's one credential) or "per_user" (each
	// calling principal, with their own credential; identity.go).
	Identity upstream.IdentityMode `yaml:"identity"`
	// Credential is where a per_user backend's credentials come from.
	Credential *BackendCredential `yaml:"credential"`
	// Era is which revisions of MCP the gateway speaks to the backend:
	// auto (the default: server/discover, then initialize), session
	// (2024-11-05 … 2025-11-25) or sessionless (2026-07-28; stdio, http
	// and process only). See backend_era.go.
	Era string `yaml:"era"`

	// Env and Headers exist only to be refused with a useful message: a
	// value in clear in the file would be a secret in clear.
	Env     map[string]string `yaml:"env"`
	Headers map[string]string `yaml:"headers"`

	// The wire's backends (proxy, process); see wire_backends.go.
	WireBackend `yaml:",inline"`
}

// MinRoleRule is one rule of a backend's min_roles.
type MinRoleRule struct {
	// Kind is tool, resource or prompt; empty matches every kind.
	Kind string `yaml:"kind"`
	// Name is a path.Match pattern over the backend's own tool or prompt
	// name (before prefixing), or over a resource's URI or URI template.
	Name string `yaml:"name"`
	// Role is the least role for the entries the rule matches.
	Role string `yaml:"role"`
}

// ShortDescription is one rule of a backend's short_descriptions.
type ShortDescription struct {
	// Kind is tool, resource or prompt; empty matches every kind.
	Kind string `yaml:"kind"`
	// Name is a path.Match pattern over the backend's own name of the
	// entry (before prefixing), or a resource's URI or URI template.
	Name string `yaml:"name"`
	// Description is the short text.
	Description string `yaml:"description"`
}

// The ways derive_short may make a short description.
const (
	DeriveTitle         = "title"
	DeriveFirstSentence = "first_sentence"
)

// Entry kinds a MinRoleRule may name.
const (
	EntryTool     = "tool"
	EntryResource = "resource"
	EntryPrompt   = "prompt"
)

// NoPrefix as Backend.Prefix keeps the backend's own names.
const NoPrefix = "-"

func (c *Config) validateBackends() error {
	seen := map[string]int{}
	for i, b := range c.Backends {
		key := fmt.Sprintf("backends[%d]", i)
		if err := c.validateBackend(key, b); err != nil {
			return err
		}
		if j, dup := seen[b.Name]; dup {
			return bad(key+".name", "%q is already the name of backends[%d]", b.Name, j)
		}
		seen[b.Name] = i
	}
	return nil
}

func (c *Config) validateBackend(key string, b BackendConfig) error {
	if b.Name == "" {
		return bad(key+".name", "required")
	}
	if strings.ContainsAny(b.Name, " \t\r\n") {
		return bad(key+".name", "%q must not contain spaces", b.Name)
	}
	if b.MaxMessageBytes < 0 {
		return bad(key+".max_message_bytes", "must not be negative")
	}
	if d := b.CallTimeout; d != nil && d.invalid != "" {
		return bad(key+".call_timeout", "%q is not a duration (write 30s, 5m, 1h; 0s for none)", d.invalid)
	} else if d != nil && d.Duration < 0 {
		return bad(key+".call_timeout", "must not be negative (0s turns the timeout off)")
	}
	if len(b.Env) > 0 {
		return bad(key+".env", "values in clear are not allowed; name the gateway's environment variables in env_from")
	}
	if len(b.Headers) > 0 {
		return bad(key+".headers", "values in clear are not allowed; name the gateway's environment variables in headers_from")
	}
	for _, check := range []func(string, BackendConfig) error{
		validateBackendOAuth, validateBackendKind, validateBackendSessions, validateBackendEra, validateShortDescriptions,
		validateShaping, c.validateBackendIdentity,
	} {
		if err := check(key, b); err != nil {
			return err
		}
	}
	return c.validateBackendRoles(key, b)
}

// validateBackendKind checks the keys each kind takes, and refuses the
// ones it does not.
func validateBackendKind(key string, b BackendConfig) error {
	if p := upstream.CheckTarget(b.Kind, b.Command, b.URL); p != nil {
		return bad(key+"."+p.Key, "%s", p.Why)
	}
	var err error
	switch b.Kind {
	case upstream.KindStdio:
		err = validateStdioBackend(key, b)
	case upstream.KindHTTP, upstream.KindSSE:
		err = validateHTTPBackend(key, b)
	case upstream.KindProxy, upstream.KindProcess:
		err = validateWireBackend(key, b)
	}
	if err == nil && b.Kind != upstream.KindProxy && b.Kind != upstream.KindProcess {
		err = refuseWireKeys(key, b)
	}
	return err
}

func validateStdioBackend(key string, b BackendConfig) error {
	if b.URL != "" {
		return bad(key+".url", "not used by kind stdio")
	}
	if len(b.HeadersFrom) > 0 {
		return bad(key+".headers_from", "not used by kind stdio")
	}
	return validateEnv(key, b)
}

func validateHTTPBackend(key string, b BackendConfig) error {
	if len(b.Command) > 0 {
		return bad(key+".command", "not used by kind %s", b.Kind)
	}
	if len(b.EnvFrom) > 0 {
		return bad(key+".env_from", "not used by kind %s", b.Kind)
	}
	if len(b.EnvFiles) > 0 {
		return bad(key+".env_files", "not used by kind %s", b.Kind)
	}
	for h, from := range b.HeadersFrom {
		if h == "" || strings.ContainsAny(h, " :\t\r\n") {
			return bad(key+".headers_from", "%q is not a header name", h)
		}
		if from == "" {
			return bad(key+".headers_from."+h, "names no environment variable")
		}
	}
	return nil
}

// validateBackendRoles checks the backend's minimum roles name roles the
// configuration knows.
func (c *Config) validateBackendRoles(key string, b BackendConfig) error {
	if b.MinRole != "" && !c.KnownRole(b.MinRole) {
		return bad(key+".min_role", "unknown role %q", b.MinRole)
	}
	for i, r := range b.MinRoles {
		rk := fmt.Sprintf("%s.min_roles[%d]", key, i)
		if err := validateEntryRule(rk, r.Kind, r.Name, "admin_*"); err != nil {
			return err
		}
		if r.Role == "" {
			return bad(rk+".role", "required")
		}
		if !c.KnownRole(r.Role) {
			return bad(rk+".role", "unknown role %q", r.Role)
		}
	}
	return nil
}

// ParseBackendFlag reads the command line's NAME=stdio:CMD ARGS…,
// NAME=http:URL, NAME=sse:URL, NAME=proxy:ws://HOST:PORT or
// NAME=process:CMD ARGS…. The command is split on spaces.
func ParseBackendFlag(s string) (BackendConfig, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok {
		return BackendConfig{}, fmt.Errorf("--backend %q: want NAME=KIND:TARGET", s)
	}
	k, target, ok := strings.Cut(rest, ":")
	kind := upstream.Kind(k)
	if !ok {
		return BackendConfig{}, fmt.Errorf("--backend %q: want NAME=KIND:TARGET (stdio, http, sse, proxy or process)", s)
	}
	b := BackendConfig{Name: name, Kind: kind}
	switch kind {
	case upstream.KindStdio:
		b.Command = strings.Fields(target)
	case upstream.KindHTTP, upstream.KindSSE, upstream.KindProxy:
		b.URL = target
	case upstream.KindProcess:
		b.Command = strings.Fields(target)
	default:
		return BackendConfig{}, fmt.Errorf("--backend %q: kind %q is not stdio, http, sse, proxy or process", s, kind)
	}
	return b, nil
}

// validateEnv checks a command backend's env_from and env_files: each
// entry names a variable to set and where its value comes from (a
// variable of the gateway's, a file), and no variable has both.
func validateEnv(key string, b BackendConfig) error {
	for name, from := range b.EnvFrom {
		if name == "" || strings.Contains(name, "=") {
			return bad(key+".env_from", "%q is not a variable name", name)
		}
		if from == "" {
			return bad(key+".env_from."+name, "names no environment variable")
		}
	}
	for name, path := range b.EnvFiles {
		if name == "" || strings.Contains(name, "=") {
			return bad(key+".env_files", "%q is not a variable name", name)
		}
		if path == "" {
			return bad(key+".env_files."+name, "names no file")
		}
		if _, dup := b.EnvFrom[name]; dup {
			return bad(key+".env_files."+name, "also in env_from; give each variable one source")
		}
	}
	return nil
}

// DefaultCallTimeout is a backend's call_timeout when none is set.
const DefaultCallTimeout = 5 * time.Minute

// CallTimeoutOrDefault is b's call_timeout, DefaultCallTimeout when unset
// (0: none).
func (b BackendConfig) CallTimeoutOrDefault() time.Duration {
	if b.CallTimeout == nil {
		return DefaultCallTimeout
	}
	return b.CallTimeout.Duration
}

// validateEntryRule checks the kind and the name pattern of a rule over a
// backend's entries (min_roles, short_descriptions), at key rk.
func validateEntryRule(rk, kind, name, example string) error {
	switch p := upstream.CheckEntryRule(kind, name); {
	case p == nil:
		return nil
	case name == "":
		return bad(rk+".name", "required (a name, or a pattern such as %q)", example)
	default:
		return bad(rk+"."+p.Key, "%s", p.Why)
	}
}

func validateShortDescriptions(key string, b BackendConfig) error {
	switch b.DeriveShort {
	case "", DeriveTitle, DeriveFirstSentence:
	default:
		return bad(key+".derive_short", "%q is not title or first_sentence (or empty for none)", b.DeriveShort)
	}
	for i, r := range b.ShortDescriptions {
		rk := fmt.Sprintf("%s.short_descriptions[%d]", key, i)
		if err := validateEntryRule(rk, r.Kind, r.Name, "search_*"); err != nil {
			return err
		}
		if strings.TrimSpace(r.Description) == "" {
			return bad(rk+".description", "empty: a short description says what the entry does, in fewer words than its own")
		}
	}
	return nil
}
