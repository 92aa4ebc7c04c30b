// catalogue.go chooses each request's view of the catalogue (package mcp,
// compact.go): /mcp/compact always serves the compact one; elsewhere the
// caller's token, then their role (a custom role's rule, then its base
// role's), then catalogue.view decide. Only the list answers differ: the
// gate, the filter by role, the audit and the metrics see the same
// entries in both.

package gateway

import (
	"net/http"
	"path"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/mcp"
)

// compactPath serves the compact view to any caller; searchPath the
// search view (when the search mode is on).
const (
	compactPath = "/mcp/compact"
	searchPath  = "/mcp/search"
)

// viewFor is the view of the caller id.
func (g *Gateway) viewFor(id mcp.Identity) mcp.View {
	c := g.cfg.Catalogue
	v, ok := c.Tokens[id.TokenID]
	if !ok {
		v, ok = c.Roles[id.Role]
	}
	if !ok {
		if base, known := g.roles.Base(id.Role); known {
			v, ok = c.Roles[base]
		}
	}
	if !ok {
		v = c.View
	}
	switch v {
	case config.ViewCompact:
		return mcp.ViewCompact
	case config.ViewSearch:
		return mcp.ViewSearch
	}
	return mcp.ViewFull
}

// catalogueView gives each request's caller its view: the route's, or
// the one its role is configured with.
func (g *Gateway) catalogueView(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := mcp.IdentityFrom(r.Context())
		switch {
		case r.URL.Path == compactPath:
			id.View = mcp.ViewCompact
		case r.URL.Path == searchPath:
			id.View = mcp.ViewSearch
		default:
			id.View = g.viewFor(id)
		}
		if id.View != mcp.ViewFull {
			r = r.WithContext(mcp.WithIdentity(r.Context(), id))
		}
		next.ServeHTTP(w, r)
	})
}

// pinned reports whether the search view lists tool name.
func (g *Gateway) pinned(name string) bool {
	for _, p := range g.cfg.Catalogue.Pinned {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
