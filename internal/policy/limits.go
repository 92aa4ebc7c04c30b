// limits.go is the rate-limit configuration: what a bucket holds and how
// fast it refills, and which rule applies to a call. Precedence is the
// first matching entry rule, else the caller's role rule, else the
// default — the most specific statement an operator made wins, so that a
// costly tool can be throttled (or exempted) without touching every role.

package policy

import (
	"fmt"
	"math"
	"path"

	"github.com/mcpgate/mcpgate/mcp"
)

// Limit is one token bucket's shape.
type Limit struct {
	// Rate is the refill in tokens per second; 0 means unlimited (no bucket
	// at all).
	Rate float64
	// Burst is how many calls may be made at once from a full bucket; it
	// must be at least 1 when Rate is set, or the bucket could never admit.
	Burst int
	// PerEntry gives every entry its own bucket (identity × entry) instead
	// of one bucket shared by all entries the rule covers.
	PerEntry bool
}

func (l Limit) unlimited() bool { return l.Rate == 0 || math.IsInf(l.Rate, 1) }

// EntryLimit applies a Limit to the entries it matches.
type EntryLimit struct {
	Kind mcp.EntryKind // empty matches every kind
	// Name is an entry name (tool or prompt name, resource URI or URI
	// template), matched exactly or as a path.Match glob such as
	// "expensive_*". As in path.Match, '*' does not cross '/'.
	Name string
	Limit
}

func (r EntryLimit) matches(e mcp.Entry) bool {
	if r.Kind != "" && r.Kind != e.Kind {
		return false
	}
	if r.Name == e.Name {
		return true
	}
	ok, _ := path.Match(r.Name, e.Name) // a bad pattern matches nothing; Validate reports it
	return ok
}

// LimitRules is the whole rate-limit configuration.
type LimitRules struct {
	Default Limit
	// Roles holds limits by role name: the name the caller has (a custom
	// role) is looked up first, then its base role.
	Roles map[string]Limit
	// Entries are tried in order; the first match wins.
	Entries []EntryLimit
}

// Validate reports the first rule that cannot work, naming it the way the
// configuration does: "default", "roles[editor]" or "entries[2]".
func (rs LimitRules) Validate() error {
	if err := rs.Default.validate(); err != nil {
		return fmt.Errorf("access: rate limit default: %w", err)
	}
	for name, l := range rs.Roles {
		if err := l.validate(); err != nil {
			return fmt.Errorf("access: rate limit roles[%s]: %w", name, err)
		}
	}
	for i, r := range rs.Entries {
		if r.Name == "" {
			return fmt.Errorf("access: rate limit entries[%d]: name is required", i)
		}
		if _, err := path.Match(r.Name, ""); err != nil {
			return fmt.Errorf("access: rate limit entries[%d]: name %q: %w", i, r.Name, err)
		}
		if err := r.Limit.validate(); err != nil {
			return fmt.Errorf("access: rate limit entries[%d] (%s): %w", i, r.Name, err)
		}
	}
	return nil
}

func (l Limit) validate() error {
	switch {
	case math.IsNaN(l.Rate) || l.Rate < 0:
		return fmt.Errorf("rate %v must be 0 (unlimited) or positive", l.Rate)
	case !l.unlimited() && l.Burst < 1:
		return fmt.Errorf("burst %d must be at least 1 when a rate is set", l.Burst)
	}
	return nil
}

// rule is the limit chosen for one call, and the name of the bucket family
// it draws from.
type rule struct {
	Limit
	id string // "default", "role:<name>" or "entry:<index>"
}

// ruleFor picks the limit for a caller with role (and base role base) using
// entry e. entryIDs[i] names the bucket family of rs.Entries[i].
func (rs *LimitRules) ruleFor(role, base string, e mcp.Entry, entryIDs []string) rule {
	for i, r := range rs.Entries {
		if r.matches(e) {
			return rule{r.Limit, entryIDs[i]}
		}
	}
	if l, ok := rs.Roles[role]; ok {
		return rule{l, "role:" + role}
	}
	if l, ok := rs.Roles[base]; ok && base != "" {
		return rule{l, "role:" + base}
	}
	return rule{rs.Default, "default"}
}
