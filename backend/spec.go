// spec.go is what a backend is: the configuration of one backend server,
// checked before anything is started.

package backend

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Kinds of backend.
const (
	KindStdio = "stdio" // a command the gateway starts and supervises
	KindHTTP  = "http"  // a Streamable HTTP endpoint
	KindSSE   = "sse"   // a legacy HTTP+SSE endpoint
)

// Spec configures one backend.
type Spec struct {
	// Name identifies the backend in the catalogue prefix, logs, errors and
	// states; unique within a Set.
	Name string
	Kind string // KindStdio, KindHTTP or KindSSE
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
	// Prefix goes before tool and prompt names at the front (default
	// Name+"__"; relay.NoPrefix for none).
	Prefix string
	// MinRole is the minimum role of every entry the backend relays.
	MinRole string
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
	switch s.Kind {
	case KindStdio:
		if len(s.Command) == 0 || s.Command[0] == "" {
			return bad("command is required for kind stdio")
		}
		for i, kv := range s.Env {
			if !strings.Contains(kv, "=") {
				return bad("env entry %d is not KEY=VALUE", i)
			}
		}
	case KindHTTP, KindSSE:
		if s.URL == "" {
			return bad("url is required for kind %s", s.Kind)
		}
	default:
		return bad("kind %q is not one of stdio, http, sse", s.Kind)
	}
	return nil
}
