// upstream.go lets a Backend forward each call on an upstream session
// chosen per caller. By default every call goes on the Backend's own
// client (one upstream session shared by every front session); a Router
// can give a front session an upstream session of its own, with its own
// Inflight registry, so that what that session's server sends — progress,
// log messages, sampling, elicitation, roots — can only reach that
// session's calls.

package relay

import (
	"context"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Upstream is one session with the backend server that calls can be
// forwarded on: a connected, initialized client and the Inflight registry
// hooked into its ClientOptions.
type Upstream struct {
	Client   *mcp.Client
	Inflight *Inflight
}

// Router chooses the upstream session each front request is forwarded on
// (Options.Router).
type Router interface {
	// Route returns the upstream session for r, or the zero Upstream for
	// the Backend's own client, and a release to call once the call has
	// ended. An error is answered -32603 with data.backend, its message
	// shown to the caller.
	Route(ctx context.Context, r *mcp.Request) (u Upstream, release func(), err error)
}

// upstream is the client and registry a call from r goes through.
func (b *Backend) upstream(ctx context.Context, r *mcp.Request) (*mcp.Client, *Inflight, func(), error) {
	if b.router == nil {
		return b.client, b.inflight, func() {}, nil
	}
	u, release, err := b.router.Route(ctx, r)
	if err != nil {
		b.log.Warn("relay: no upstream session", "method", r.Method, "err", err)
		return nil, nil, nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "backend "+b.name+" unavailable: "+err.Error(),
			map[string]string{"backend": b.name})
	}
	if release == nil {
		release = func() {}
	}
	if u.Client == nil || u.Inflight == nil {
		return b.client, b.inflight, release, nil
	}
	return u.Client, u.Inflight, release, nil
}
