// catalogue.go configures who gets which view of the catalogue: the full
// one, every entry as its backend defines it, or the compact one, for
// clients with small contexts (short descriptions from the backends'
// short_descriptions or derive_short, schemas without prose). The gate,
// the filter by role, the audit and the metrics are the same in both.

package config

import (
	"fmt"
	"path"
)

// The catalogue views.
const (
	ViewFull    = "full"
	ViewCompact = "compact"
	// ViewSearch lists only the pinned tools and the search mode's two:
	// one that finds tools, one that calls them.
	ViewSearch = "search"
)

// Catalogue chooses callers' views.
type Catalogue struct {
	// View is every caller's view unless a role or token rule applies:
	// full (the default) or compact.
	View string `yaml:"view"`
	// Roles gives a role its view (a custom role's rule first, then its
	// base role's).
	Roles map[string]string `yaml:"roles"`
	// Tokens gives a service token, by id (tok_…), its view; it wins over
	// the token's role.
	Tokens map[string]string `yaml:"tokens"`
	// Pinned are the tools the search view lists beside its two, by
	// path.Match pattern over their names as callers see them
	// (prefix included).
	Pinned []string `yaml:"pinned"`
	// Pinning is what a tool or prompt whose definition a backend changed
	// from the one approved (first seen, or an admin's) gets. Warn (the
	// default) serves it and raises the alarm; enforce withholds it until
	// an admin approves the change; off does nothing. The pins are kept in
	// the store, shared by replicas.
	Pinning string `yaml:"pinning"`
}

// The values of catalogue.pinning.
const (
	PinningWarn    = "warn"
	PinningEnforce = "enforce"
	PinningOff     = "off"
)

// PinningMode is Pinning, warn when unset.
func (k Catalogue) PinningMode() string {
	if k.Pinning == "" {
		return PinningWarn
	}
	return k.Pinning
}

// SearchOn reports whether any caller may get the search view: the
// search mode's tools are registered then only.
func (k Catalogue) SearchOn() bool {
	if k.View == ViewSearch || len(k.Pinned) > 0 {
		return true
	}
	for _, v := range k.Roles {
		if v == ViewSearch {
			return true
		}
	}
	for _, v := range k.Tokens {
		if v == ViewSearch {
			return true
		}
	}
	return false
}

func (c *Config) validateCatalogue() error {
	k := c.Catalogue
	view := func(key, v string) error {
		if v != "" && v != ViewFull && v != ViewCompact && v != ViewSearch {
			return bad(key, "%q is not full, compact or search", v)
		}
		return nil
	}
	if err := view("catalogue.view", k.View); err != nil {
		return err
	}
	for role, v := range k.Roles {
		if !c.KnownRole(role) {
			return bad("catalogue.roles."+role, "unknown role %q", role)
		}
		if err := view("catalogue.roles."+role, v); err != nil {
			return err
		}
	}
	for i, p := range k.Pinned {
		if _, err := path.Match(p, ""); p == "" || err != nil {
			return bad(fmt.Sprintf("catalogue.pinned[%d]", i), "%q is not a name or a pattern", p)
		}
	}
	switch k.Pinning {
	case "", PinningWarn, PinningEnforce, PinningOff:
	default:
		return bad("catalogue.pinning", "%q is not warn, enforce or off", k.Pinning)
	}
	for id, v := range k.Tokens {
		if id == "" {
			return bad("catalogue.tokens", "a token id is empty")
		}
		if err := view(fmt.Sprintf("catalogue.tokens.%s", id), v); err != nil {
			return err
		}
	}
	return nil
}
