// catalogue.go configures who gets which view of the catalogue: the full
// one, every entry as its backend defines it, or the compact one, for
// clients with small contexts (short descriptions from the backends'
// short_descriptions or derive_short, schemas without prose). The gate,
// the filter by role, the audit and the metrics are the same in both.

package config

import "fmt"

// The catalogue views.
const (
	ViewFull    = "full"
	ViewCompact = "compact"
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
}

func (c *Config) validateCatalogue() error {
	k := c.Catalogue
	view := func(key, v string) error {
		if v != "" && v != ViewFull && v != ViewCompact {
			return bad(key, "%q is not full or compact", v)
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
