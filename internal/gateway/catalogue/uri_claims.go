// uri_claims.go decides which backend serves a resource URI (or URI
// template) that several list. A name can be renamed with its backend's
// prefix; a URI cannot, so one backend serves it and the others wait. Which
// one used to depend on which came up first, so a URI's min_role could
// change between two starts, and when its owner was removed by a reload the
// URI was missing until a restart. Now the backend that comes first in the
// configuration (Claims.SetOrder) serves it, taking it over from a later
// one that came up sooner. When the owner lets it go (it no longer lists
// the URI, it goes down, it is removed), the next claimant in order takes
// over at once.

package catalogue

import (
	"math"
	"slices"
)

// uriClaim is the backends listing one URI: the owner (registered in the
// front) and those waiting for it, each with the entry it would register.
type uriClaim struct {
	owner   claimant
	waiting []claimant
}

type claimant struct {
	b *Mirror
	e entry
}

// SetOrder gives the backends' ranks, first first: the configuration's
// order. A backend not named ranks after every named one; between two of
// the same rank, the one holding a URI keeps it. A change of order takes
// effect at the next claim.
func (c *Claims) SetOrder(names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rank = make(map[string]int, len(names))
	for i, n := range names {
		c.rank[n] = i
	}
}

// rankOf is b's place in the order. c.mu is held.
func (c *Claims) rankOf(name string) int {
	if r, ok := c.rank[name]; ok {
		return r
	}
	return math.MaxInt
}

// claimURI asks for key of k (a URI kind) for b with entry e. It returns
// whether b holds it now (register e), and the later backend it took the
// key over from, if it did (e replaces that one's entry in place); or
// else b waits for it.
func (c *Claims) claimURI(k kind, e entry, b *Mirror) (held bool, from string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.uris[k]
	if m == nil {
		m = map[string]*uriClaim{}
		c.uris[k] = m
	}
	uc := m[e.key]
	me := claimant{b: b, e: e}
	switch {
	case uc == nil:
		m[e.key] = &uriClaim{owner: me}
	case uc.owner.b.name == b.name:
		uc.owner = me
	case c.rankOf(b.name) < c.rankOf(uc.owner.b.name):
		from = uc.owner.b.name
		uc.waiting = append(withoutClaimant(uc.waiting, b.name), uc.owner)
		uc.owner = me
	default:
		uc.waiting = append(withoutClaimant(uc.waiting, b.name), me)
		return false, ""
	}
	return true, from
}

// releaseURI lets go of key for b. It reports whether b held it. When
// another backend waits for it, next is the one that takes it over: its
// entry replaces b's in the front, so b must not remove the key. Otherwise
// next is nil, and b removes it. next is a copy: the claim itself changes
// under c.mu when another backend releases the key meanwhile.
func (c *Claims) releaseURI(k kind, key string, b *Mirror) (held bool, next *claimant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	uc := c.uris[k][key]
	if uc == nil {
		return false, nil
	}
	if uc.owner.b.name != b.name {
		uc.waiting = withoutClaimant(uc.waiting, b.name)
		return false, nil
	}
	if len(uc.waiting) == 0 {
		delete(c.uris[k], key)
		return true, nil
	}
	best := 0
	for i, w := range uc.waiting {
		if c.rankOf(w.b.name) < c.rankOf(uc.waiting[best].b.name) {
			best = i
		}
	}
	uc.owner = uc.waiting[best]
	uc.waiting = slices.Delete(uc.waiting, best, best+1)
	taker := uc.owner
	return true, &taker
}

// heldURIs lists the keys of k the ledger gives to backend.
func (c *Claims) heldURIs(k kind, backend string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys []string
	for key, uc := range c.uris[k] {
		if uc.owner.b.name == backend {
			keys = append(keys, key)
		}
	}
	return keys
}

// uriOwner names the backend holding key of k ("" for none).
func (c *Claims) uriOwner(k kind, key string) string {
	if uc := c.uris[k][key]; uc != nil {
		return uc.owner.b.name
	}
	return ""
}

func withoutClaimant(cs []claimant, name string) []claimant {
	return slices.DeleteFunc(cs, func(w claimant) bool { return w.b.name == name })
}

// adopt registers in the front an entry b took over from a backend that
// let it go. It runs on a goroutine of its own, taking b.mu as Sync does,
// so that the releasing backend (which holds its own) never waits on b.
func (b *Mirror) adopt(k kind, e entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.claims.frontServer()
	if s == nil || b.claims.ownerOf(k, e.key) != b.name {
		return // released again, or taken by another, meanwhile
	}
	if b.owned[k] == nil {
		b.owned[k] = map[string]string{}
	}
	b.owned[k][e.key] = string(e.def)
	b.log.Info("relay: took over an entry another backend let go", "kind", string(k), "name", e.key)
	if k == kindTemplate {
		b.addTemplates(s, []entry{e})
	} else {
		b.addResources(s, []entry{e})
	}
}

// yield lets go of key of k (a URI kind) and reports whether b must remove
// it from the front. It must not when b did not hold it: another backend
// serves it. Nor must it when the next claimant takes it over: its entry
// will replace b's in place, with no gap in the list.
func (b *Mirror) yield(k kind, key string) bool {
	held, next := b.claims.releaseURI(k, key, b)
	if next != nil {
		go next.b.adopt(k, next.e)
		return false
	}
	return held
}

func isURIKind(k kind) bool { return k == kindResource || k == kindTemplate }
