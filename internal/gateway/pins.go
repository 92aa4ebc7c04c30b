// pins.go is the gateway's side of pinning (catalogue/pin.go): the pins
// live in the store, shared by replicas, and catalogue.pinning says what
// a changed definition does. A change is said once: a log line, a count
// (mcpgate_definition_changes_total) and an audit record. The pins of
// held entries are read again every pinRecheck, and their backend listed
// again once one is approved, so that an approval made on another
// replica or with the CLI releases them here.

package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/tick"
	"github.com/mcpgate/mcpgate/mcp"
)

// pinRecheck is how often the pins of held entries are read again.
const pinRecheck = 5 * time.Second

// pins is the gateway's pinning: its mode, and the backends holding
// entries now.
type pins struct {
	g    *Gateway
	st   store.PinStore
	mode string

	mu      sync.Mutex
	holding map[string]held // by backend
}

// held is what one backend's last listing left held: the entries, each
// with the fingerprint it was listed with; unverified when the pins could
// not be read (the backend is then listed again).
type held struct {
	entries    []store.Sighting
	unverified bool
}

// pinner is the catalogue's Pin, nil when pinning is off or there is no
// store.
func (g *Gateway) pinner(st store.Store) catalogue.Pinner {
	mode := g.cfg.Catalogue.PinningMode()
	if mode == config.PinningOff || st == nil {
		return nil
	}
	g.pins = &pins{g: g, st: st, mode: mode, holding: map[string]held{}}
	return g.pins.check
}

func (p *pins) check(ctx context.Context, backend string, seen []catalogue.Listed) []catalogue.Verdict {
	sights := make([]store.Sighting, len(seen))
	for i, s := range seen {
		sights[i] = store.Sighting{Kind: s.Kind, Name: s.Name, Fingerprint: s.Fingerprint, Definition: s.Definition}
	}
	out := make([]catalogue.Verdict, len(seen))
	now := time.Now().UTC()
	got, fresh, err := p.st.SightPins(ctx, backend, sights, now)
	enforce := p.mode == config.PinningEnforce
	var h held
	if err != nil {
		// Unverified is unapproved under enforce.
		p.g.log.Error("catalogue: the pins could not be read; under enforce the backend's tools and prompts are held",
			"backend", backend, "err", err, "pinning", p.mode)
		for i := range out {
			out[i].Hold = enforce
		}
		h.unverified = enforce
	}
	for i, pin := range got {
		if seen[i].Fingerprint == pin.Fingerprint {
			continue
		}
		out[i].Hold = enforce
		if enforce {
			h.entries = append(h.entries, sights[i])
		}
		if fresh[i] {
			p.said(backend, seen[i], pin, now)
		}
	}
	p.mu.Lock()
	if h.unverified || len(h.entries) > 0 {
		p.holding[backend] = h
	} else {
		delete(p.holding, backend)
	}
	p.mu.Unlock()
	return out
}

// said raises the alarm for a change seen for the first time.
func (p *pins) said(backend string, s catalogue.Listed, pin store.Pin, at time.Time) {
	held := p.mode == config.PinningEnforce
	p.g.log.Warn("catalogue: a backend changed a definition; it awaits approval (mcpgate catalogue pending)",
		"backend", backend, "kind", s.Kind, "name", s.Name, "held", held, "approved_by", pin.ApprovedBy)
	p.g.metrics.DefinitionChanged(backend, s.Kind)
	if p.g.audit != nil {
		_ = p.g.audit.Record(store.AuditRecord{Time: at, Subject: "catalogue", Kind: s.Kind, Name: s.Name, Backend: backend,
			Outcome: "definition_changed"})
	}
}

// recheck reads again, every pinRecheck until ctx ends, the pins of the
// held entries. A backend one of whose held entries was approved (or
// whose pins could not be read) is listed again. The others are not, as
// an approval may take days.
func (p *pins) recheck(ctx context.Context) {
	tick.Every(ctx, pinRecheck, func(time.Time) bool {
		p.mu.Lock()
		holding := make(map[string]held, len(p.holding))
		for name, h := range p.holding {
			holding[name] = h
		}
		p.mu.Unlock()
		for name, h := range holding {
			if h.unverified || p.approvedAny(ctx, name, h.entries) {
				p.g.backends.Resync(name)
			}
		}
		return true
	})
}

// heldCounts is, by backend, the entries held now (an unverified backend
// counts its last listing's).
func (p *pins) heldCounts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.holding))
	for name, h := range p.holding {
		out[name] = len(h.entries)
	}
	return out
}

// approvedAny reports whether one of backend's held entries now has the
// definition it was listed with approved.
func (p *pins) approvedAny(ctx context.Context, backend string, entries []store.Sighting) bool {
	for _, e := range entries {
		if pin, err := p.st.PinOf(ctx, backend, e.Kind, e.Name); err == nil && pin.Fingerprint == e.Fingerprint {
			return true
		}
	}
	return false
}

// decide approves or rejects a pending change for by, records it in the
// audit log, and lists the backend again so that this replica serves an
// approved entry at once (the others within pinRecheck).
func (p *pins) decide(ctx context.Context, st store.PinStore, backend, kind, name, fingerprint string, approve bool, by mcp.Identity) error {
	var err error
	outcome := "definition_rejected"
	now := time.Now().UTC()
	if approve {
		outcome = "definition_approved"
		err = st.ApprovePin(ctx, backend, kind, name, fingerprint, by.Subject, now)
	} else {
		err = st.RejectPin(ctx, backend, kind, name, fingerprint)
	}
	if err != nil {
		return err
	}
	if p == nil {
		return nil // pinning off here: nothing is held
	}
	if p.g.audit != nil {
		_ = p.g.audit.Record(store.AuditRecord{Time: now, Subject: by.Subject, TokenID: by.TokenID, Role: by.Role,
			Kind: kind, Name: name, Backend: backend, Outcome: outcome})
	}
	p.g.backends.Resync(backend)
	return nil
}
