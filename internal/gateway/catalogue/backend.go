// backend.go is the Backend: one backend server's catalogue kept in step
// with the front server's registries. Sync can run again at any time
// (after list_changed, after the backend recovers) and changes only what
// changed, so clients see list_changed for real changes only.

package catalogue

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/textcut"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// NoPrefix as Options.Prefix keeps the backend's own tool and prompt names.
const NoPrefix = "-"

// Options configures a Backend.
type Options struct {
	// Prefix goes before every tool and prompt name at the front (default
	// name+"__"; NoPrefix for none). Resource URIs are never prefixed: a URI
	// names the resource itself. An App's ui:// URI gets the backend's name
	// as its first segment instead (apps.go).
	Prefix string
	// MinRole is the minimum role of every entry the backend registers,
	// unless MinRoleFor is set.
	MinRole string
	// MinRoleFor, if set, gives the minimum role of each entry from its
	// kind ("tool", "resource" — resources and URI templates alike — or
	// "prompt") and its name at the backend (before prefixing; a
	// resource's URI or a template's pattern).
	MinRoleFor func(kind, name string) string
	// ShortFor, if set, gives an entry its compact-view description
	// (mcp/compact.go) from its kind and name (as MinRoleFor's), its full
	// description and its title; "" for none. refused reports a
	// configured one that was not used (not shorter than the full text),
	// which the relay logs.
	ShortFor func(kind, name, full, title string) (short string, refused bool)
	// Claims is the ledger shared by every backend relaying into the same
	// front server; without a shared one, collisions between backends go
	// unnoticed and the later backend's entry replaces the earlier one's.
	// Default: a ledger of this backend's own.
	Claims *Claims
	// Logger is the backend's: its lines should name the backend
	// (backends.Backend's logger carries backend=NAME), which the relay
	// does not add again. Default: discard.
	Logger *slog.Logger
	// Inflight is the registry of calls in flight that the backend's
	// mcp.Client relays notifications and requests through (hook its
	// OnNotification and OnRequest into the ClientOptions). Default: one
	// of the Backend's own, reached by nothing.
	Inflight *Inflight
	// Router, if set, chooses the upstream session of each call
	// (upstream.go); calls it routes to the zero Upstream, and every call
	// without a Router, go on the Backend's own client.
	Router Router
	// Observe, if set, is told of each call forwarded to the backend
	// (observe.go), with Kind, how the backend is reached.
	Observe Observer
	Kind    upstream.Kind
	// CallTimeout, if positive, bounds how long a call waits for the
	// backend without an answer or a progress notification (timeout.go).
	CallTimeout time.Duration
	// ValidateArguments checks tools/call arguments against the input
	// schema the backend listed, answering -32602 with the violations
	// before the backend is asked (register.go).
	ValidateArguments bool
	// Shapes shape the backend's tools and prompts before callers see
	// them (shape.go).
	Shapes Shapes
	// Pin, if set, decides which tools and prompts to hold because their
	// definitions changed unapproved (pin.go).
	Pin Pinner
}

// Mirror relays one backend MCP server through a front mcp.Server.
type Mirror struct {
	name     string
	client   *mcp.Client
	prefix   string
	minRole  func(kind, name string) string
	shortFor func(kind, name, full, title string) (string, bool)
	claims   *Claims
	inflight *Inflight
	router   Router
	observe  Observer
	kind     upstream.Kind
	timeout  time.Duration
	validate bool
	shapes   Shapes
	pin      Pinner
	// parked are calls for 2026-07-28 callers waiting for their retry
	// (park.go).
	parked parks
	// sessionless says the backend speaks 2026-07-28 (sessionless.go).
	sessionless bool
	// instructions are the backend's own, from its initialize result.
	instructions string
	// offersLogging says the backend takes logging/setLevel; levelSent is
	// the rank last asked of it (0: none; guarded by claims.mu).
	offersLogging bool
	levelSent     int
	log           *slog.Logger

	mu    sync.Mutex                 // serialises Sync and Unsync
	owned map[kind]map[string]string // key at the front → definition registered
	// seen is what was worked out of each definition the backend listed
	// (its fingerprint, its scan for text aimed at the model), by kind and
	// name, kept while it lists the same bytes; seenNext is the next Sync's
	// (seen.go).
	seen, seenNext map[string]*seenDef
}

// New returns a Backend relaying through client, which must be connected
// (Initialize or Connect: its capabilities decide which lists are asked
// for, and its era how calls go up).
func New(name string, client *mcp.Client, opts Options) *Mirror {
	switch opts.Prefix {
	case "":
		opts.Prefix = name + "__"
	case NoPrefix:
		opts.Prefix = ""
	}
	if opts.Claims == nil {
		opts.Claims = NewClaims()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Inflight == nil {
		opts.Inflight = NewInflight()
	}
	opts.Inflight.setLogger(opts.Logger)
	if opts.MinRoleFor == nil {
		min := opts.MinRole
		opts.MinRoleFor = func(string, string) string { return min }
	}
	return &Mirror{
		name: name, client: client, prefix: opts.Prefix, minRole: opts.MinRoleFor, shortFor: opts.ShortFor,
		claims: opts.Claims, inflight: opts.Inflight, router: opts.Router, log: opts.Logger,
		owned: map[kind]map[string]string{}, seen: map[string]*seenDef{}, observe: opts.Observe, kind: opts.Kind, timeout: opts.CallTimeout,
		validate: opts.ValidateArguments, shapes: opts.Shapes, pin: opts.Pin, instructions: instructionsOf(client.InitializeResult()),
		offersLogging: offersLogging(client.InitializeResult()), sessionless: client.Sessionless(),
	}
}

// Name is the backend's name.
func (b *Mirror) Name() string { return b.name }

// entry is one listed entry prepared for the front.
type entry struct {
	key   string          // name or URI at the front
	orig  string          // name or URI at the backend
	def   json.RawMessage // the definition the front lists
	shape *Shape          // the rule that shaped it (shape.go), nil for none
	raw   json.RawMessage // the definition as the backend listed it
	// own are the x-mcp-header arguments of a shaped tool's schema as the
	// backend listed it.
	own []mcp.HeaderParam
}

// Sync lists the backend's catalogue and brings s in line with it: new
// entries are registered, changed ones replaced in place, and those the
// backend no longer lists removed. If listing fails, s is left as it was.
func (b *Mirror) Sync(ctx context.Context, s *mcp.Server) error {
	c, err := b.fetch(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.claims.setLive(b)
	b.claims.setFront(s)
	b.seenNext = make(map[string]*seenDef, len(b.seen))
	defer func() { b.seen, b.seenNext = b.seenNext, nil }() // what is no longer listed is forgotten

	// Pinned (pin.go): tools, prompts, templates and App resources.
	held := map[kind][]entry{}
	tools, prompts := b.prepare(kindTool, c.tools, "name", true), b.prepare(kindPrompt, c.prompts, "name", true)
	resources, templates := b.prepare(kindResource, c.resources, "uri", false), b.prepare(kindTemplate, c.templates, "uriTemplate", false)
	tools, held[kindTool] = b.pinned(ctx, kindTool, tools)
	prompts, held[kindPrompt] = b.pinned(ctx, kindPrompt, prompts)
	templates, held[kindTemplate] = b.pinned(ctx, kindTemplate, templates)
	resources, held[kindResource] = b.pinnedApps(ctx, resources)

	added, removed := b.reconcile(kindTool, tools)
	s.RemoveTools(removed...)
	b.addTools(s, added)

	added, removed = b.reconcile(kindResource, resources)
	s.RemoveResources(removed...)
	b.addResources(s, added)

	added, removed = b.reconcile(kindTemplate, templates)
	s.RemoveResourceTemplates(removed...)
	b.addTemplates(s, added)

	added, removed = b.reconcile(kindPrompt, prompts)
	s.RemovePrompts(removed...)
	b.addPrompts(s, added)
	b.hold(held) // up again: its live entries answer now, its held ones say so
	b.claims.catchUpLevel(ctx, b)
	return nil
}

// Unsync removes every entry the backend registered in s (the backend is
// gone), and its tombstones (tombstones.go). A later Sync brings them back.
func (b *Mirror) Unsync(s *mcp.Server) {
	b.claims.Forget(b.name)
	b.remove(s)
}

// remove takes the backend's entries out of s and the ledger.
func (b *Mirror) remove(s *mcp.Server) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.claims.clearLive(b)
	b.claims.forgetWaiting(b.name)
	s.RemoveTools(b.release(kindTool)...)
	s.RemoveResources(b.release(kindResource)...)
	s.RemoveResourceTemplates(b.release(kindTemplate)...)
	s.RemovePrompts(b.release(kindPrompt)...)
}

// release lets go of every key of k the backend registered and returns
// those to remove from the front.
func (b *Mirror) release(k kind) []string {
	keys := make([]string, 0, len(b.owned[k]))
	for key := range b.owned[k] {
		if b.letGo(k, key) {
			keys = append(keys, key)
		}
	}
	if isURIKind(k) {
		// A URI handed over to b whose adoption has not run yet is b's in the
		// ledger, but not in b.owned. Let it go too, or it would stay with a
		// backend that is gone. The front keeps the entry of the one that handed
		// it over until then.
		for _, key := range b.claims.heldURIs(k, b.name) {
			if b.letGo(k, key) {
				keys = append(keys, key)
			}
		}
	}
	delete(b.owned, k)
	return keys
}

// letGo releases key of k in the ledger and reports whether the backend
// must remove it from the front (a URI another backend takes over, or
// holds, stays: uri_claims.go).
func (b *Mirror) letGo(k kind, key string) bool {
	if isURIKind(k) {
		return b.yield(k, key)
	}
	b.claims.release(k, key, b.name)
	return true
}

// plainKey reports whether an entry's key, as written in def's member
// and decoded, is plain text (textcut.Plain). A stray byte decodes to
// U+FFFD: a name the backend does not know. A control character reaches
// logs and terminals, and PostgreSQL holds no NUL in a pin.
func plainKey(def json.RawMessage, member, key string) bool {
	raw, _ := jsonrpc.Lookup(def, member)
	return utf8.Valid(raw) && textcut.Plain(key)
}

// prepare reads each raw entry's key member and, for names, applies the
// entry's shaping rule (shape.go) and splices the prefix into the
// definition. Entries without a usable key (none, or one that is not
// textcut.Plain) are logged and skipped; so are
// hidden ones, and those whose rule cannot be applied (logged as errors
// naming the rule: the entry is not served unshaped). A rule that
// matches nothing is logged too.
func (b *Mirror) prepare(k kind, raws []json.RawMessage, keyMember string, prefixed bool) []entry {
	out := make([]entry, 0, len(raws))
	rules := b.shapes.of(k)
	matched := make([]bool, len(rules))
	for _, raw := range raws {
		orig, ok := jsonrpc.LookupString(raw, keyMember)
		if !ok || orig == "" {
			b.log.Warn("relay: entry without a "+keyMember+" skipped", "kind", string(k), "name", orig)
			continue
		}
		if !plainKey(raw, keyMember, orig) {
			b.log.Error("relay: an entry whose "+keyMember+" holds a control character or bytes not UTF-8 withheld",
				"kind", string(k), "name", textcut.Valid(orig, 128))
			continue
		}
		if key, other, twins := definitionTwins(k, raw); twins {
			b.log.Error("relay: a definition whose keys readers read apart withheld", "kind", string(k), "name", orig,
				"key", textcut.Valid(key, 128), "other", textcut.Valid(other, 128)) // twins.go
			continue
		}
		b.flag(k, orig, raw)
		e := entry{key: orig, orig: orig, def: raw, raw: raw}
		front := orig
		if s, i := match(rules, orig); s != nil {
			matched[i] = true
			if s.Hide {
				continue
			}
			var err error
			if k == kindTool {
				front, e.def, err = shapeTool(s, orig, raw)
				schema, _ := jsonrpc.Lookup(raw, "inputSchema")
				e.own, _ = mcp.HeaderParams(schema)
			} else {
				front, e.def, err = shapePrompt(s, orig, raw)
			}
			if err != nil {
				b.log.Error("relay: shaping rule not applicable, entry withheld", "kind", string(k), "name", orig, "err", err)
				continue
			}
			e.shape = s
		}
		switch {
		case prefixed:
			e.key = b.prefix + front
			if k == kindTool {
				e.def = b.withAppURIs(e.def) // apps.go
			}
		default:
			e.key = b.frontAppURI(orig) // apps.go: ui:// URIs get the backend's segment
		}
		if e.key != orig {
			def, err := jsonrpc.WithStringMember(e.def, keyMember, e.key)
			if err != nil {
				b.log.Warn("relay: entry skipped", "kind", string(k), "name", orig, "err", err)
				continue
			}
			e.def = def
		}
		out = append(out, e)
	}
	for i, ok := range matched {
		if !ok {
			b.log.Error("relay: shaping rule matches no entry of the backend", "kind", string(k), "rule", rules[i].Key, "name", rules[i].Name)
		}
	}
	return out
}

// flag logs, once per definition, text in it aimed at the model rather
// than its reader (mcp.Suspicious). b.mu is held.
func (b *Mirror) flag(k kind, name string, raw json.RawMessage) {
	d := b.seenOf(k, name, raw)
	if d.scanned {
		return
	}
	d.scanned = true
	if flags := mcp.Suspicious(raw); len(flags) > 0 {
		b.log.Warn("relay: a definition carries text aimed at the model, not its reader", "kind", string(k), "name", name, "flags", flags)
	}
}

// reconcile claims the listed entries and returns those to register (new or
// changed) and the keys to remove (no longer listed). A name another
// backend holds is renamed or skipped, and logged; a URI another backend
// holds waits for it (uri_claims.go).
func (b *Mirror) reconcile(k kind, listed []entry) (added []entry, removed []string) {
	before := b.owned[k]
	now := make(map[string]string, len(listed))
	seen := make(map[string]bool, len(listed))
	for _, e := range listed {
		if seen[e.key] {
			b.log.Warn("relay: entry listed twice, first kept", "kind", string(k), "name", e.key)
			continue
		}
		seen[e.key] = true
		if isURIKind(k) {
			held, from := b.claims.claimURI(k, e, b)
			if !held {
				b.log.Warn("relay: collision, a backend earlier in the configuration serves it; this one takes over if it leaves",
					"kind", string(k), "name", e.key, "owner", b.claims.ownerOf(k, e.key))
				continue
			}
			if from != "" {
				b.log.Warn("relay: collision, taken over from a backend later in the configuration",
					"kind", string(k), "name", e.key, "from", from)
			}
		} else if owner, ok := b.claims.claim(k, e.key, b.name); !ok {
			if e.shape != nil && e.shape.Rename != "" {
				// A name the configuration chose is not changed again.
				b.log.Error("relay: shaping rule renames onto an entry another backend serves, entry withheld", "kind", string(k),
					"rule", e.shape.Key, "name", e.key, "owner", owner)
				continue
			}
			renamed, ok := b.renamed(k, e)
			if !ok {
				b.log.Warn("relay: collision, entry skipped", "kind", string(k), "name", e.key, "owner", owner)
				continue
			}
			b.log.Warn("relay: collision, entry renamed with the backend's name", "kind", string(k),
				"name", e.key, "owner", owner, "as", renamed.key)
			e = renamed
		}
		now[e.key] = string(e.def)
		if old, had := before[e.key]; !had || old != string(e.def) {
			added = append(added, e)
		}
	}
	for key := range before {
		if _, kept := now[key]; kept || seen[key] {
			continue // still listed: registered, or waiting for its URI
		}
		if b.letGo(k, key) {
			removed = append(removed, key)
		}
	}
	b.owned[k] = now
	return added, removed
}

// renamed resolves a collision of a tool or prompt name by the backend's
// own name as prefix (NAME__name), claimed for b; URIs cannot be renamed,
// and a name already so prefixed is not prefixed twice.
func (b *Mirror) renamed(k kind, e entry) (entry, bool) {
	if k != kindTool && k != kindPrompt {
		return e, false
	}
	key := b.name + "__" + e.orig
	if key == e.key {
		return e, false
	}
	if _, ok := b.claims.claim(k, key, b.name); !ok {
		return e, false
	}
	def, err := jsonrpc.WithStringMember(e.def, "name", key)
	if err != nil {
		b.claims.release(k, key, b.name)
		return e, false
	}
	return entry{key: key, orig: e.orig, def: def}, true
}

// drop forgets an entry the front refused.
func (b *Mirror) drop(k kind, e entry, err error) {
	b.log.Warn("relay: entry refused by the server", "kind", string(k), "name", e.key, "err", err)
	delete(b.owned[k], e.key)
	b.letGo(k, e.key)
}
