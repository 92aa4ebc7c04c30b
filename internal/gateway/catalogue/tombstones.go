// tombstones.go remembers the entries of a backend that is down. They are
// out of the front's lists (clients got list_changed), but a client that
// listed them earlier may still call one. It must learn that the backend is
// unavailable (-32603 with data.backend, as the specification has it for
// partial failure), not that the name never existed. The front server asks
// the ledger through mcp.Options.Unknown (pass Claims.Unknown), and shows
// the answer only to callers its gate would have shown the entry to.
//
// A backend's tombstones are laid when its connection ends (Down), and
// cleared when it syncs again or leaves the gateway (Unsync, Forget).

package catalogue

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// graveyard holds the tombstones of one front. URIs are resolved through
// a server of its own holding the dead resources and templates, so that a
// URI is matched exactly as the front would have matched it.
type graveyard struct {
	stones map[kind]map[string]tombstone // kind → front key → tombstone
	uris   *mcp.Server                   // resources and templates of stones
}

// tombstone is an entry of a backend that is down, or held (pin.go).
type tombstone struct {
	backend string
	entry   mcp.Entry      // as the front's gate saw it
	err     *jsonrpc.Error // the answer; nil: Unavailable
}

// mcpKind is the front's kind of an entry of key space k.
func mcpKind(k kind) mcp.EntryKind {
	switch k {
	case kindTool:
		return mcp.KindTool
	case kindPrompt:
		return mcp.KindPrompt
	}
	return mcp.KindResource
}

// unreachable answers reads of a dead URI; Unknown never calls it.
func unreachable(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
	return nil, mcp.ErrNotFound
}

// bury lays stones for the given keys of k, answering err (nil:
// Unavailable). c.mu is held.
func (c *Claims) bury(k kind, backend string, entries []mcp.Entry, err *jsonrpc.Error) {
	if c.graves == nil {
		c.graves = &graveyard{stones: map[kind]map[string]tombstone{}, uris: mcp.NewServer(mcp.Options{})}
	}
	g := c.graves
	if g.stones[k] == nil {
		g.stones[k] = map[string]tombstone{}
	}
	for _, e := range entries {
		g.stones[k][e.Name] = tombstone{backend: backend, entry: e, err: err}
		switch k {
		case kindResource:
			_ = g.uris.AddResources(&mcp.Resource{URI: e.Name, Read: unreachable})
		case kindTemplate:
			_ = g.uris.AddResourceTemplates(&mcp.ResourceTemplate{URITemplate: e.Name, Read: unreachable})
		}
	}
}

// Forget clears the tombstones of backend: it is up again, or no longer
// part of the gateway (its names then become unknown).
func (c *Claims) Forget(backend string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forget(backend)
}

// forget is Forget with c.mu held.
func (c *Claims) forget(backend string) {
	if c.graves == nil {
		return
	}
	for k, m := range c.graves.stones {
		var keys []string
		for key, s := range m {
			if s.backend == backend {
				keys = append(keys, key)
				delete(m, key)
			}
		}
		switch k {
		case kindResource:
			c.graves.uris.RemoveResources(keys...)
		case kindTemplate:
			c.graves.uris.RemoveResourceTemplates(keys...)
		}
	}
}

// lookup finds the tombstone a call of kind names. c.mu is held.
func (c *Claims) lookup(k mcp.EntryKind, name string) (tombstone, bool) {
	if c.graves == nil {
		return tombstone{}, false
	}
	switch k {
	case mcp.KindTool:
		s, ok := c.graves.stones[kindTool][name]
		return s, ok
	case mcp.KindPrompt:
		s, ok := c.graves.stones[kindPrompt][name]
		return s, ok
	case mcp.KindResource:
		key, template, ok := c.graves.uris.ResourceKey(name)
		if !ok {
			return tombstone{}, false
		}
		k := kindResource
		if template {
			k = kindTemplate
		}
		s, ok := c.graves.stones[k][key]
		return s, ok
	}
	return tombstone{}, false
}

// Unknown is the front server's mcp.Options.Unknown: for an entry of a
// backend that is down, the entry and the error a caller who may see it
// gets; nothing for a name the ledger never knew.
func (c *Claims) Unknown(k mcp.EntryKind, name string) (mcp.Entry, error) {
	c.mu.Lock()
	s, ok := c.lookup(k, name)
	c.mu.Unlock()
	if !ok {
		return mcp.Entry{}, nil
	}
	if s.err != nil {
		return s.entry, s.err
	}
	return s.entry, Unavailable(s.backend)
}

// Unavailable is the error of a call to a backend that is down: -32603
// with data.backend, so that a client can tell which backend failed and
// that the entry is not gone for good.
func Unavailable(backend string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "backend "+backend+" is unavailable",
		map[string]string{"backend": backend})
}

// Down removes every entry the backend registered in s, as Unsync does,
// but leaves tombstones of them: the backend's connection ended and it is
// expected back. Calls naming them meanwhile answer Unavailable. The
// stones are laid before the entries leave, so that no call falls between
// the two and hears that the name never existed.
func (b *Mirror) Down(s *mcp.Server) {
	b.mu.Lock()
	dead := make(map[kind][]mcp.Entry, len(b.owned))
	for k, m := range b.owned {
		for key := range m {
			orig := key
			if k == kindTool || k == kindPrompt {
				orig = strings.TrimPrefix(key, b.prefix)
			} else {
				orig, _ = b.backendAppURI(key) // apps.go
			}
			dead[k] = append(dead[k], mcp.Entry{Kind: mcpKind(k), Name: key, MinRole: b.minRole(roleKind(k), orig), Owner: b.name})
		}
	}
	b.mu.Unlock()
	b.claims.mu.Lock()
	for k, es := range dead {
		b.claims.bury(k, b.name, es, nil)
	}
	b.claims.mu.Unlock()
	b.remove(s)
}

// roleKind is the kind a MinRoleFor rule names for key space k.
func roleKind(k kind) string {
	switch k {
	case kindTool:
		return "tool"
	case kindPrompt:
		return "prompt"
	}
	return "resource"
}
