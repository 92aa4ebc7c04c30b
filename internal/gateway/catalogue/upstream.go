// upstream.go lets a Backend forward each call on an upstream session
// chosen per caller. By default every call goes on the Backend's own
// client: one upstream session shared by every front session. A Router can
// give a front session an upstream session of its own, with its own
// Inflight registry. What that session's server sends (progress, log
// messages, sampling, elicitation, roots) can then only reach that
// session's calls.

package catalogue

import (
	"context"
	"errors"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Session is one session with the backend server that calls can be
// forwarded on: a connected, initialized client and the Inflight registry
// hooked into its ClientOptions.
type Session struct {
	Client   *mcp.Client
	Inflight *Inflight
}

// Router chooses the upstream session each front request is forwarded on
// (Options.Router).
type Router interface {
	// Route returns the upstream session for r, or the zero Upstream for
	// the Backend's own client, and a release to call once the call has
	// ended. An error is answered -32603 with data.backend; only a
	// *RouteError's Shown text reaches the caller (the rest, a child's
	// start failure or a dial error naming an internal address, stays in
	// the log). A *jsonrpc.Error is the caller's answer as it is (a
	// per_user backend's call from someone who stored no credential).
	Route(ctx context.Context, r *mcp.Request) (u Session, release func(), err error)
}

// RouteError is a Route failure whose Shown text is for the caller (the
// session cap reached, say).
type RouteError struct {
	Shown string
	Err   error
}

func (e *RouteError) Error() string { return e.Err.Error() }
func (e *RouteError) Unwrap() error { return e.Err }

// upstream is the client and registry a call from r goes through.
func (b *Mirror) upstream(ctx context.Context, r *mcp.Request) (*mcp.Client, *Inflight, func(), error) {
	if b.router == nil {
		return b.client, b.inflight, func() {}, nil
	}
	u, release, err := b.router.Route(ctx, r)
	if err != nil {
		if answer, ok := errors.AsType[*jsonrpc.Error](err); ok {
			return nil, nil, nil, answer
		}
		b.log.Warn("relay: no upstream session", "method", r.Method, "err", err)
		var shown *RouteError
		if errors.As(err, &shown) {
			return nil, nil, nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "backend "+b.name+" unavailable: "+shown.Shown,
				map[string]string{"backend": b.name})
		}
		return nil, nil, nil, b.unavailable()
	}
	if release == nil {
		release = func() {}
	}
	if u.Client == nil || u.Inflight == nil {
		return b.client, b.inflight, release, nil
	}
	return u.Client, u.Inflight, release, nil
}
