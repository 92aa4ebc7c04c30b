// intercept.go wires the interceptors (package intercept) inside the
// engine's gate: they see only what the gate admitted. The chain in force
// is swapped whole at a reload; a call reads one chain.

package gateway

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/intercept"
	"github.com/mcpgate/mcpgate/mcp"
)

// newIntercepts builds cfg's interceptors, counted in the metrics.
func (g *Gateway) newIntercepts(cfg *config.Config) (*intercept.Chain, error) {
	return intercept.New(cfg.InterceptorSpecs(), intercept.Options{Client: &http.Client{}, Logger: g.log,
		Count: g.metrics.Intercepted, Redacted: g.metrics.Redacted})
}

// intercepted is the engine middleware that runs the chain in force.
func (g *Gateway) intercepted(next mcp.Handler) mcp.Handler {
	return mcp.HandlerFunc(func(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
		c := g.intercepts.Load()
		if c.Len() == 0 {
			return next.ServeMCP(ctx, r)
		}
		return c.Middleware(next).ServeMCP(ctx, r)
	})
}
