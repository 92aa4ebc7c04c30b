// startup.go holds the first requests that read the catalogue until the
// configured backends have had their first chance to come up. A client that
// connects the moment the gateway listens (stdio above all) would otherwise
// see an empty list, or "unknown tool" for a tool a second away. The wait
// ends for good once every backend is up or has failed its first attempt,
// or after startup_wait; a backend that is down answers then as it would
// later (-32603 naming it). /readyz says "starting" meanwhile.

package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// waitingMethods read the catalogue, or carry what the backends give
// (initialize's instructions).
var waitingMethods = map[string]bool{
	"initialize": true, "server/discover": true,
	"tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"completion/complete": true,
}

// newStartup returns the channel closed when the wait is over: at once
// without backends or with no wait configured.
func (g *Gateway) newStartup() {
	g.started = make(chan struct{})
	if g.cfg.StartupWait.Duration <= 0 || len(g.cfg.Backends) == 0 {
		g.endStartup()
		return
	}
	// The deadline runs from now, whether or not Run starts the backends.
	g.startDeadline = time.AfterFunc(g.cfg.StartupWait.Duration, func() {
		if g.starting() {
			g.log.Warn("serving before every backend came up (startup_wait passed)", "startup_wait", g.cfg.StartupWait.Duration.String())
		}
		g.endStartup()
	})
}

// endStartup ends the wait, once.
func (g *Gateway) endStartup() { g.startOnce.Do(func() { close(g.started) }) }

// hasStarted reports whether the wait for the backends is over. It is
// asked before ctx.Done, which makes a channel for a context that had none:
// an allocation on every call.
func (g *Gateway) hasStarted() bool {
	select {
	case <-g.started:
		return true
	default:
		return false
	}
}

// awaitBackends is the engine middleware that holds waiting methods.
func (g *Gateway) awaitBackends(next mcp.Handler) mcp.Handler {
	return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
		if waitingMethods[r.Method] && !g.hasStarted() {
			select {
			case <-g.started:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return next.ServeMCP(ctx, r)
	})
}

// watchStartup ends the wait once every backend has settled (up, or its
// first attempt failed); the deadline of newStartup ends it otherwise.
// Run runs it.
func (g *Gateway) watchStartup(ctx context.Context) {
	select {
	case <-g.started:
		return
	default:
	}
	for {
		changed := g.backends.Changed()
		if g.backendsSettled() {
			g.endStartup()
			return
		}
		select {
		case <-changed:
		case <-g.started: // the deadline
			return
		case <-ctx.Done():
			return
		}
	}
}

// backendsSettled reports whether every backend is up or has failed at
// least once.
func (g *Gateway) backendsSettled() bool {
	for _, s := range g.backends.States() {
		if !s.Up && s.LastError == "" && s.Restarts == 0 {
			return false
		}
	}
	return true
}

// starting reports whether requests are still held.
func (g *Gateway) starting() bool {
	select {
	case <-g.started:
		return false
	default:
		return true
	}
}
