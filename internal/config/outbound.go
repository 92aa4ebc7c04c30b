// outbound.go is the configuration of the outbound policy
// (internal/egress): what the gateway may reach when a third party names
// the URL — a backend's resource metadata, an authorization server's
// endpoints, a client's metadata document, an issuer's key set.

package config

import (
	"fmt"
	"net"
	"strings"
)

// Outbound configures the fetches the gateway makes on someone else's
// word. By default they reach public addresses only, follow no redirect,
// and are bounded in time and size; a URL the configuration names (a
// backend's, an issuer's) is reached on its own origin whatever its
// address.
type Outbound struct {
	// AllowHosts are hosts (names or addresses, as URLs name them) that
	// may be reached whatever address they resolve to: an identity
	// provider or an authorization server inside the operator's network.
	AllowHosts []string `yaml:"allow_hosts"`
	// Timeout bounds each request, its answer read (default 10s).
	Timeout Duration `yaml:"timeout"`
	// MaxBodyBytes bounds each answer's body (default 1 MiB).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
}

func (o Outbound) validate() error {
	for i, h := range o.AllowHosts {
		if h == "" || strings.ContainsAny(h, "/:@ ") && net.ParseIP(strings.Trim(h, "[]")) == nil {
			return bad(fmt.Sprintf("outbound.allow_hosts[%d]", i), "%q is not a host name or an address (no scheme, port or path)", h)
		}
	}
	if o.Timeout.Duration < 0 {
		return bad("outbound.timeout", "must not be negative")
	}
	if o.MaxBodyBytes < 0 {
		return bad("outbound.max_body_bytes", "must not be negative")
	}
	return nil
}
