// reload.go applies a new configuration to a running gateway: backends are
// added, removed or restarted as the new configuration says, while the
// others, their upstream sessions and their calls in flight are left
// alone, and so are the clients' sessions.
//
// What a reload applies, and what it leaves for a restart:
//   - A backend whose Spec is unchanged is not touched. One whose Spec
//     differs in any field (command, URL, a secret's value, prefix, minimum
//     roles, …) is stopped and started again. A new name is started. A name
//     gone is stopped, and its entries leave the catalogue (clients get
//     list_changed).
//   - rate_limits: applied; the new rules start with full buckets.
//   - listen, store, http, auth, oauth_client, catalogue, roles, audit,
//     metrics: not applied. They are bound into listeners, the store, the
//     authenticator and the transports when the gateway is built; each
//     one that differs is named in a warning and in the report, and its
//     running value stays. The new
//     configuration is validated with those running values in place, so a
//     backend naming a role that only the new file defines is refused.
//
// Everything is checked before anything changes: the whole configuration,
// the rate limits, and every backend's Spec with its secrets read from the
// environment. One error refuses the reload, naming the key at fault, and
// the running configuration stays as it was.

package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/internal/policy"
)

// ReloadReport says what a Reload changed. Names are sorted.
type ReloadReport struct {
	Added     []string // backends started
	Removed   []string // backends stopped, their entries gone
	Restarted []string // backends stopped and started with a new Spec
	Unchanged []string // backends left running untouched
	// RateLimits is true when new rate limits were put in force, and
	// Policy when new policy rules or interceptors were.
	RateLimits, Policy bool
	// NeedRestart names the keys whose new value was not applied (listen,
	// store, http, auth, roles, audit, metrics): their running value stays
	// until the gateway is restarted.
	NeedRestart []string
}

// Changed reports whether the reload changed anything.
func (r ReloadReport) Changed() bool {
	return len(r.Added)+len(r.Removed)+len(r.Restarted) > 0 || r.RateLimits || r.Policy
}

// reloadState is what the running gateway was built from, as a reload
// compares it.
type reloadState struct {
	mu      sync.Mutex // one reload at a time
	running *config.Config
	specs   map[string]backends.Spec
}

func (r *reloadState) init(cfg *config.Config, specs []backends.Spec) {
	r.running = cfg
	r.specs = make(map[string]backends.Spec, len(specs))
	for _, s := range specs {
		r.specs[s.Name] = s
	}
}

// ErrReloadClosed is returned by Reload once the gateway is shutting down.
var ErrReloadClosed = errors.New("gateway: closed, nothing to reload")

// Reload applies cfg to the running gateway as the file comment says. On
// an error nothing has changed, and the error names the key at fault.
func (g *Gateway) Reload(ctx context.Context, cfg *config.Config) (ReloadReport, error) {
	var rep ReloadReport
	if cfg == nil {
		return rep, errors.New("reload: no configuration")
	}
	r := &g.reload
	r.mu.Lock()
	defer r.mu.Unlock()

	next := *cfg
	rep.NeedRestart = keepRestartOnly(&next, r.running)
	if err := next.Validate(); err != nil {
		if slices.Contains(rep.NeedRestart, "roles") {
			return ReloadReport{}, fmt.Errorf("reload refused: %w (checked against the running roles: a change of roles needs a restart)", err)
		}
		return ReloadReport{}, fmt.Errorf("reload refused: %w", err)
	}
	rules := limitRules(next.RateLimits)
	if err := rules.Validate(); err != nil {
		return ReloadReport{}, fmt.Errorf("reload refused: rate_limits: %w", err)
	}
	specs, err := backendSpecs(next.Backends, g.backendOAuth, outbound(next.Outbound))
	if err != nil {
		return ReloadReport{}, fmt.Errorf("reload refused: %w", err)
	}
	cel, err := policy.CompileRules(next.Policy.Specs(), g.log)
	if err != nil {
		return ReloadReport{}, fmt.Errorf("reload refused: %w", err)
	}
	chain, err := g.newIntercepts(&next)
	if err != nil {
		return ReloadReport{}, fmt.Errorf("reload refused: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return ReloadReport{}, err
	}

	for _, k := range rep.NeedRestart {
		g.log.Warn("reload: this setting changed but needs a restart; the running value stays", "key", k)
	}
	if !reflect.DeepEqual(next.RateLimits, r.running.RateLimits) {
		g.gate.set(g.roles, rules)
		rep.RateLimits = true
		g.log.Info("reload: rate limits in force")
	}
	if !reflect.DeepEqual(next.Policy, r.running.Policy) {
		g.gate.setRules(cel)
		rep.Policy = true
		g.log.Info("reload: policy rules in force", "rules", cel.Len())
	}
	if !reflect.DeepEqual(next.Interceptors, r.running.Interceptors) {
		g.intercepts.Store(chain)
		rep.Policy = true
		g.log.Info("reload: interceptors in force", "interceptors", chain.Len())
	}

	wanted := make(map[string]backends.Spec, len(specs))
	for _, s := range specs {
		wanted[s.Name] = s
	}
	g.claims.SetOrder(specNames(specs))
	for _, name := range slices.Sorted(maps.Keys(r.specs)) {
		if _, keep := wanted[name]; !keep {
			g.backends.Remove(name)
			delete(r.specs, name)
			rep.Removed = append(rep.Removed, name)
			g.log.Info("reload: backend removed", "backend", name)
		}
	}
	for _, s := range specs { // in the file's order
		old, running := r.specs[s.Name]
		switch {
		case !running:
			if err := g.backends.Add(s); err != nil {
				return rep, closedOr(err)
			}
			rep.Added = append(rep.Added, s.Name)
			g.log.Info("reload: backend added", "backend", s.Name, "kind", s.Kind)
		case len(specChanges(old, s)) > 0:
			// Stopped first: a command is never running twice, and the old
			// entries leave before the new ones are claimed.
			g.backends.Remove(s.Name)
			delete(r.specs, s.Name)
			if err := g.backends.Add(s); err != nil {
				return rep, closedOr(err)
			}
			rep.Restarted = append(rep.Restarted, s.Name)
			g.log.Info("reload: backend restarted", "backend", s.Name, "kind", s.Kind,
				"changed", strings.Join(specChanges(old, s), ","))
		default:
			rep.Unchanged = append(rep.Unchanged, s.Name)
		}
		r.specs[s.Name] = s
	}
	r.running = &next
	slices.Sort(rep.Added)
	slices.Sort(rep.Restarted)
	slices.Sort(rep.Unchanged)
	return rep, nil
}

func closedOr(err error) error {
	if errors.Is(err, backends.ErrSetClosed) {
		return ErrReloadClosed
	}
	return fmt.Errorf("reload: %w", err)
}

// keepRestartOnly puts the running value back into next for every key a
// reload does not apply, and returns those that differed.
func keepRestartOnly(next, running *config.Config) []string {
	var keys []string
	keep := func(key string, a, b any, restore func()) {
		if !reflect.DeepEqual(a, b) {
			keys = append(keys, key)
			restore()
		}
	}
	keep("listen", next.Listen, running.Listen, func() { next.Listen = running.Listen })
	keep("store", next.Store, running.Store, func() { next.Store = running.Store })
	keep("http", next.HTTP, running.HTTP, func() { next.HTTP = running.HTTP })
	keep("auth", next.Auth, running.Auth, func() { next.Auth = running.Auth })
	keep("oauth_client", next.OAuthClient, running.OAuthClient, func() { next.OAuthClient = running.OAuthClient })
	keep("catalogue", next.Catalogue, running.Catalogue, func() { next.Catalogue = running.Catalogue })
	if !maps.Equal(next.Roles, running.Roles) { // nil and {} are the same roles
		keys = append(keys, "roles")
		next.Roles = running.Roles
	}
	keep("audit", next.Audit, running.Audit, func() { next.Audit = running.Audit })
	keep("metrics", next.Metrics, running.Metrics, func() { next.Metrics = running.Metrics })
	return keys
}

// specChanges names the fields in which two Specs of one backend differ
// (names only: some fields hold secrets). Env is compared as a set, since
// it is built from a map.
func specChanges(a, b backends.Spec) []string {
	a.Env, b.Env = sortedCopy(a.Env), sortedCopy(b.Env)
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var changed []string
	for i := range va.NumField() {
		f := va.Type().Field(i)
		if f.IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			changed = append(changed, strings.ToLower(f.Name))
		}
	}
	if len(changed) == 0 && !reflect.DeepEqual(a, b) {
		changed = append(changed, "spec")
	}
	return changed
}

func sortedCopy(s []string) []string {
	if s == nil {
		return nil
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
