// outbound.go makes the outbound policy (internal/egress) of the
// configuration's outbound section. Every fetch the gateway makes on a
// third party's word goes out under it: a backend's resource metadata and
// its authorization server's endpoints, a client's metadata document, an
// issuer's key set, an upstream provider's endpoints.

package gateway

import (
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/egress"
)

// outbound is the policy c configures.
func outbound(c config.Outbound) *egress.Policy {
	return &egress.Policy{AllowHosts: c.AllowHosts, Timeout: c.Timeout.Duration, MaxBody: c.MaxBodyBytes}
}
