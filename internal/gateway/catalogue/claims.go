// claims.go is the ledger of which backend owns each relayed name and URI
// in one front server. The server's registries replace an entry of the same
// key silently; without the ledger a second backend listing the same URI
// would take over the first one's resource.

package catalogue

import (
	"log/slog"
	"sync"

	"github.com/mcpgate/mcpgate/internal/fifo"
	"github.com/mcpgate/mcpgate/mcp"
)

// kind is a key space of the front server: tool names, prompt names,
// resource URIs and URI templates are independent.
type kind string

const (
	kindTool     kind = "tool"
	kindResource kind = "resource"
	kindTemplate kind = "resource template"
	kindPrompt   kind = "prompt"
)

// Claims records which backend registered each entry of one front server.
// Every Backend relaying into the same server must share one Claims.
type Claims struct {
	mu        sync.Mutex
	owners    map[kind]map[string]string    // tool and prompt names: kind → key → backend name
	uris      map[kind]map[string]*uriClaim // resource URIs and templates (uri_claims.go)
	rank      map[string]int                // backend name → place in the configuration (SetOrder)
	live      map[string]*Mirror            // backend name → its synced Backend
	level     mcp.LogLevel                  // the most verbose logging/setLevel asked (loglevel.go)
	front     *mcp.Server                   // the front server, once a Backend synced
	graves    *graveyard                    // entries of backends that are down; nil until one is
	tasks     fifo.Map[taskKey, taskRoute]  // a caller's task → the backend that made it (tasks.go)
	shared    SharedTasks                   // every replica's task routes, or nil (tasks.go)
	sharedLog *slog.Logger
	// parkHandOff carries retries of parked calls between replicas, or
	// is nil (handoff.go).
	parkHandOff ParkHandOff
}

// NewClaims returns an empty ledger.
func NewClaims() *Claims {
	return &Claims{owners: map[kind]map[string]string{}, uris: map[kind]map[string]*uriClaim{}, live: map[string]*Mirror{},
		tasks: fifo.Map[taskKey, taskRoute]{Max: maxTaskRoutes}}
}

// ownName holds the names of the front server's own entries; no backend
// is so named (a backend's name has no spaces, backends/spec.go).
const ownName = "(the gateway)"

// ReserveTools holds names for tools of the front server's own (the
// gateway's, not a backend's) before any backend syncs. A backend listing
// one is renamed with its own name, or skipped, as at any collision. It
// does not replace the server's tool, which the registry would do silently.
func (c *Claims) ReserveTools(names ...string) {
	for _, n := range names {
		c.claim(kindTool, n, ownName)
	}
}

// claim gives key to backend unless another backend holds it; it returns
// the holder.
func (c *Claims) claim(k kind, key, backend string) (owner string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.owners[k]
	if m == nil {
		m = map[string]string{}
		c.owners[k] = m
	}
	if owner, held := m[key]; held && owner != backend {
		return owner, false
	}
	m[key] = backend
	return backend, true
}

// release frees key if backend holds it.
func (c *Claims) release(k kind, key, backend string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owners[k][key] == backend {
		delete(c.owners[k], key)
	}
}

// ownerOf names the backend holding key of k ("" for none).
func (c *Claims) ownerOf(k kind, key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if isURIKind(k) {
		return c.uriOwner(k, key)
	}
	return c.owners[k][key]
}

// frontServer is the front server, once a Backend synced.
func (c *Claims) frontServer() *mcp.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.front
}

// forgetWaiting takes backend out of every URI it waits for: it is gone
// or down, and must not be handed an entry it cannot serve.
func (c *Claims) forgetWaiting(backend string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.uris {
		for _, uc := range m {
			uc.waiting = withoutClaimant(uc.waiting, backend)
		}
	}
}
