// roles.go is the role hierarchy: the three base roles viewer < editor <
// admin, and the custom names an operator maps onto them. Everything that
// compares roles asks Roles, so that a name nobody configured is refused
// everywhere in the same way (fail closed) rather than compared as a
// string somewhere and let through.

package policy

import (
	"fmt"
	"slices"
	"strings"
)

// The base roles, lowest first.
const (
	Viewer = "viewer"
	Editor = "editor"
	Admin  = "admin"
)

var baseLevels = map[string]int{Viewer: 1, Editor: 2, Admin: 3}

// Highest is the highest of roles by level ("" when none is known): the
// role of a caller who holds several at once (scopes, a claim's values).
// Of two at one level, the first wins.
func Highest(level func(role string) (int, bool), roles ...string) string {
	best, bestLevel := "", 0
	for _, r := range roles {
		if n, known := level(r); known && n > bestLevel {
			best, bestLevel = r, n
		}
	}
	return best
}

// IsBase reports whether role is one of the three base roles.
func IsBase(role string) bool { return baseLevels[role] != 0 }

// Roles knows every role name a caller or an entry may carry and the base
// role each one stands for. It is immutable once built and safe for
// concurrent use.
type Roles struct {
	base map[string]string // role name -> base role name
}

// NewRoles returns the base roles plus custom, which maps custom role names
// onto a base role (for example {"intern": "viewer", "sre": "admin"}).
// Mapping a base name onto itself is allowed and changes nothing; mapping
// it onto another base role is refused, because "editor" must mean the
// same thing in every token and every registry entry.
func NewRoles(custom map[string]string) (*Roles, error) {
	r := &Roles{base: make(map[string]string, len(baseLevels)+len(custom))}
	for name := range baseLevels {
		r.base[name] = name
	}
	// Sorted, so that of several bad entries the same one is always named.
	names := make([]string, 0, len(custom))
	for name := range custom {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		base := custom[name]
		switch {
		case strings.TrimSpace(name) == "":
			return nil, fmt.Errorf("access: a custom role needs a name (it maps onto %q)", base)
		case baseLevels[base] == 0:
			return nil, fmt.Errorf("access: role %q maps onto %q, which is not a base role (want viewer, editor or admin)", name, base)
		case baseLevels[name] != 0 && name != base:
			return nil, fmt.Errorf("access: role %q is a base role and cannot be mapped onto %q", name, base)
		}
		r.base[name] = base
	}
	return r, nil
}

// Level returns the rank of a role (viewer 1, editor 2, admin 3) and
// whether the role is known. The empty name is not a role.
func (r *Roles) Level(name string) (int, bool) {
	base, ok := r.base[name]
	if !ok {
		return 0, false
	}
	return baseLevels[base], true
}

// Known reports whether name is a base role or a configured custom role.
func (r *Roles) Known(name string) bool {
	_, ok := r.base[name]
	return ok
}

// Base returns the base role name stands for.
func (r *Roles) Base(name string) (string, bool) {
	base, ok := r.base[name]
	return base, ok
}

// Allows reports whether a caller with callerRole may use an entry whose
// minimum role is minRole. An empty minRole is the viewer floor: any
// caller with a known role. A minRole nobody configured refuses everyone,
// admin included — a typo in a registration must close the entry, not
// open it. An unknown caller role is refused for the same reason.
func (r *Roles) Allows(callerRole, minRole string) bool {
	if minRole == "" {
		minRole = Viewer
	}
	need, ok := r.Level(minRole)
	if !ok {
		return false
	}
	have, ok := r.Level(callerRole)
	return ok && have >= need
}

// Names is every role name, least first: by base role, then by name.
func (r *Roles) Names() []string {
	out := make([]string, 0, len(r.base))
	for name := range r.base {
		out = append(out, name)
	}
	slices.SortFunc(out, func(a, b string) int {
		if d := baseLevels[r.base[a]] - baseLevels[r.base[b]]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return out
}
